"""Uploads are bounded in memory: a small file that describes a huge table is refused before it is built.

The peak memory of ``read_upload`` is measured in a fresh subprocess: Linux's peak
resident size (VmHWM) is reset just before the call (``/proc/self/clear_refs``), so the
figure is the growth the call caused. Each test takes about 5–8 s (building or parsing
tens of millions of cells is the point).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from accfirst.datasets import UploadLimits, read_upload
from accfirst.errors import DataError
from tests.data import parquet_bomb

ROOT = Path(__file__).resolve().parents[2]
GROWTH_LIMIT_MB = 300
# Reads the file named on the command line with read_upload; prints the message and the peak growth.
MEASURE = """
import json, sys
from pathlib import Path
from accfirst.datasets import read_upload
from accfirst.errors import DataError
from tests.data import parquet_bomb

def kib(field):
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(field))

data = Path(sys.argv[1]).read_bytes()
open("/proc/self/clear_refs", "w").write("5")  # reset VmHWM to the current resident size
before = kib("VmRSS:")
try:
    read_upload(data, sys.argv[2])
    message = None
except DataError as exc:
    message = str(exc)
print(json.dumps({"message": message, "growth_mb": (kib("VmHWM:") - before) / 1024}))
"""


def measure(tmp_path: Path, content: bytes, name: str) -> dict:
    """``read_upload(content, name)`` in a fresh Python: the error message (or None) and the peak growth in MB."""
    path = tmp_path / "upload.bin"
    path.write_bytes(content)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path), name], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_parquet_bomb_is_refused_from_its_metadata(tmp_path):
    bomb = parquet_bomb()
    assert len(bomb) < 2 * 1024**2
    result = measure(tmp_path, bomb, "bomb.parquet")
    assert result["message"] == (
        "'bomb.parquet' would take 1,144 MB in memory (500,000 rows × 300 columns × 8 bytes); the limit is 400 MB. "
        "Upload fewer rows or columns, or raise the memory limit"
    )
    assert result["growth_mb"] < GROWTH_LIMIT_MB, result


def test_a_wide_csv_is_refused_while_it_is_read_in_chunks(tmp_path):
    # 200,000 rows × 300 columns of one digit and empty fields: 60 MB of text, 458 MB as numbers.
    wide = b",".join(f"x{i}".encode() for i in range(300)) + b"\n" + (b"1" + b"," * 299 + b"\n") * 200_000
    result = measure(tmp_path, wide, "wide.csv")
    assert result["message"].startswith("'wide.csv' would take 4")
    assert "MB in memory (counting only its first" in result["message"] and "the limit is 400 MB" in result["message"]
    assert result["growth_mb"] < GROWTH_LIMIT_MB, result


def test_one_long_text_repeated_on_every_row_is_held_once(tmp_path):
    """Dictionary-encoded text stays shared: 500,000 references to one 10 kB string, not 5 GB of copies."""
    note = pa.DictionaryArray.from_arrays(np.zeros(500_000, dtype=np.int32), pa.array(["x" * 10_000]))
    buffer = io.BytesIO()
    # Without the Arrow schema the file says "text column" only; its pages are still dictionary-encoded.
    pq.write_table(pa.table({"note": note, "y": np.arange(500_000.0)}), buffer, compression="zstd", store_schema=False)
    result = measure(tmp_path, buffer.getvalue(), "notes.parquet")
    assert result["message"] is None
    assert result["growth_mb"] < GROWTH_LIMIT_MB, result


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_the_memory_limit_is_configurable_and_named(kind):
    frame = pd.DataFrame(np.ones((2000, 10)), columns=[f"c{i}" for i in range(10)])  # 160,000 bytes as numbers
    buffer = io.BytesIO()
    frame.to_parquet(buffer) if kind == "parquet" else frame.to_csv(buffer, index=False)
    content = buffer.getvalue()
    assert read_upload(content, f"t.{kind}", limits=UploadLimits(max_memory=200_000)).shape == (2000, 10)
    with pytest.raises(DataError, match=r"would take 0 MB in memory .*; the limit is 0 MB"):
        read_upload(content, f"t.{kind}", limits=UploadLimits(max_memory=100_000))
    with pytest.raises(DataError, match="max_memory must be a whole number"):
        UploadLimits(max_memory=0)


def test_a_long_file_name_is_echoed_cut_short():
    with pytest.raises(DataError) as error:
        read_upload(b"", "x" * 10_000 + ".csv")
    assert len(str(error.value)) < 200 and "…" in str(error.value)
