"""Data larger than memory: problems from Parquet, a chunk at a time. Prints figures; asserts nothing.

Writes 20,000,000 rows × 20 float64 features (plus a ridge target and a logistic label; 3.2 GB
of features) in each of three layouts, one layout at a time, and measures it before writing the
next:

(i)   80 files of 250,000 rows (one row group each);
(ii)  8 files of 2,500,000 rows, one row group each (420 MB of numbers per row group);
(iii) one file of 20,000,000 rows in row groups of 128 MB of numbers.

The rows are the same in every layout (so are the problems). Per layout:

- speed, in ONE process, alternating (--repeat rounds, best of each): one pyarrow pass over
  the same files and columns (``pyarrow.parquet.read_table`` per file, pyarrow's own threads:
  the yardstick), pyarrow's record batches alone (the parts and chunks ``accfirst.scale``
  reads, on as many threads, nothing done with them), the ridge pass
  (``accfirst.scale.problem_from_parquet``: XᵀX, Xᵀy, yᵀy, n) and the logistic problem;
- each in a fresh process, so that its peak RSS is its own: the ridge problem, the logistic
  problem (θ* by Newton: passes and seconds), a noise-reduction run on each, and the ridge
  pass at chunks of 4, 16 and 64 MB: the growth of the peak RSS over the RSS before the pass,
  fitted as workers × (r + c × chunk), gives the memory bound's constant c.

Goals: peak RSS ≤ 1 GB in every layout; the ridge pass ≤ 1.5× the pyarrow pass. Dask's local
threads (one per core). The data go to a folder under the system's temporary directory (--out)
and are deleted after each layout unless --keep.

Usage: python benchmarks/bench_scale.py [--layouts i,ii,iii] [--rows 20000000] [--features 20]
       [--repeat 3] [--out DIR] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

# This checkout's package, not an installed one (each measurement runs this file afresh).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
OUT = Path(tempfile.gettempdir()) / "accfirst-bench-scale"
FEATURE_BOUND, TARGET_BOUND = 40.0, 10.0
ALPHA, LAM = 0.001, 0.005
BLOCK_ROWS = 250_000  # rows generated at a time: the same rows in every layout
CHUNKS_MB = (4.0, 16.0, 64.0)  # the memory bound's fit
# layout → (files, rows per row group: None for one per file, 0 for 128 MB of numbers)
LAYOUTS = {"i": (80, None), "ii": (8, None), "iii": (1, 0)}
DESCRIPTION = {
    "i": "80 files × 250,000 rows",
    "ii": "8 files × 2,500,000 rows, one row group each",
    "iii": "1 file × 20,000,000 rows, 128 MB row groups",
}


def blocks(rows: int, features: int):
    """The synthetic rows in blocks of BLOCK_ROWS: heavy-tailed features (‖x‖₁ ≈ 18 on average), y and a label."""
    import pyarrow as pa

    rng = np.random.default_rng(2017)
    beta, weights = rng.normal(size=features), rng.normal(scale=0.3, size=features)
    for start in range(0, rows, BLOCK_ROWS):
        size = min(BLOCK_ROWS, rows - start)
        X = rng.standard_t(5, size=(size, features))
        columns = {f"x{j}": X[:, j] for j in range(features)}
        columns["y"] = X @ beta / 4 + rng.normal(size=size)
        columns["label"] = rng.random(size) < 1 / (1 + np.exp(-X @ weights))
        yield pa.table(columns)


def write(folder: Path, layout: str, rows: int, features: int) -> float:
    """One layout's files; returns seconds. Row groups are cut from the blocks, never straddle a write."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    files, group = LAYOUTS[layout]
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    source = blocks(rows, features)
    pending = [next(source)]
    schema = pending[0].schema
    for index, per_file in enumerate(np.diff(np.linspace(0, rows, files + 1).astype(int))):
        size = group if group is not None else per_file
        size = size or (128 << 20) // (8 * (features + 2))
        with pq.ParquetWriter(folder / f"part{index:04d}.parquet", schema) as writer:
            left = int(per_file)
            while left:
                take = min(size, left)
                while sum(len(table) for table in pending) < take:
                    pending.append(next(source))
                table = pa.concat_tables(pending)
                writer.write_table(table.slice(0, take), row_group_size=take)
                pending = [table.slice(take)]
                left -= take
    return time.perf_counter() - started


def rss_mb(reset: bool = False) -> tuple[float, float]:
    """(peak, current) RSS of this process in MB, from Linux's /proc; ``reset`` starts a new peak.

    VmHWM belongs to this process alone (ru_maxrss would carry the parent's peak over exec).
    """
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    if reset:
        Path("/proc/self/clear_refs").write_text("5")
    return int(status["VmHWM"].split()[0]) / 1024, int(status["VmRSS"].split()[0]) / 1024


def speed(folder: Path, features: int, repeat: int) -> dict[str, list[float]]:
    """Wall and CPU seconds of the yardstick, pyarrow's batches alone, the ridge pass and the logistic problem.

    Alternated in this process, round after round.
    """
    import pyarrow.parquet as pq

    from accfirst.scale import problem_from_parquet
    from accfirst.scale.chunks import CHUNK_MB, chunk_rows
    from accfirst.scale.files import inspect_parquet
    from accfirst.scale.passes import READ_BUFFER

    names = [f"x{j}" for j in range(features)]
    files = sorted(folder.glob("*.parquet"))
    source = inspect_parquet(folder, "y", names, "ridge")
    rows = chunk_rows(CHUNK_MB, features + 1)

    def read_table() -> int:
        return sum(pq.read_table(path, columns=[*names, "y"]).num_rows for path in files)

    def batches(part) -> int:
        reader = pq.ParquetFile(part.path, buffer_size=READ_BUFFER, pre_buffer=False)
        chunks = reader.iter_batches(rows, row_groups=list(part.row_groups), columns=[*names, "y"], use_threads=False)
        return sum(batch.num_rows for batch in chunks)

    def record_batches() -> int:
        with ThreadPoolExecutor(os.cpu_count()) as pool:
            return sum(pool.map(batches, source.parts))

    def ridge() -> int:
        return problem_from_parquet(
            folder, "y", names, lam=LAM, feature_bound=FEATURE_BOUND, target_bound=TARGET_BOUND
        ).n

    def logistic() -> int:
        return problem_from_parquet(folder, "label", names, task="logistic", lam=LAM, feature_bound=FEATURE_BOUND).n

    runs = {"read_table": read_table, "record_batches": record_batches, "ridge": ridge, "logistic": logistic}
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            started, cpu = time.perf_counter(), time.process_time()
            assert run() == source.n
            seconds[name].append(time.perf_counter() - started)
            # CPU seconds of all the process's threads: less swayed by other processes than wall time.
            seconds.setdefault(f"{name}_cpu", []).append(time.process_time() - cpu)
    return seconds


def measure(kind: str, folder: Path, features: int, chunk_mb: float) -> dict[str, object]:
    """One problem built in this process: seconds, RSS before and at the peak, passes, and a noise-reduction run."""
    from accfirst.methods.nr import NoiseReduction
    from accfirst.methods.options import SearchOptions
    from accfirst.scale import problem_from_parquet
    from accfirst.scale.problems import ParquetRows
    from accfirst.search.experiments import search, trial_rng

    names = [f"x{j}" for j in range(features)]
    passes = {"count": 0}
    reduce = ParquetRows.reduce

    def counted(self, *args, **kwargs):
        passes["count"] += 1
        return reduce(self, *args, **kwargs)

    ParquetRows.reduce = counted  # the logistic passes (Newton iterations, exact losses)
    _, base = rss_mb(reset=True)
    started = time.perf_counter()
    problem = problem_from_parquet(
        folder,
        "y" if kind == "ridge" else "label",
        names,
        task=kind,
        lam=LAM,
        feature_bound=FEATURE_BOUND,
        target_bound=TARGET_BOUND,
        chunk_mb=chunk_mb,
    )
    figures = {
        "seconds": time.perf_counter() - started,
        "peak_mb": rss_mb()[0],
        "base_mb": base,
        "passes": passes["count"] if kind == "logistic" else 1,
        "n": problem.n,
        "theta_head": [round(float(v), 12) for v in problem.theta_star[:3]],
    }
    passes["count"] = 0
    started = time.perf_counter()
    run = search(problem, NoiseReduction.key, ALPHA, 0.1, trial_rng(0, NoiseReduction.key, ALPHA, 0), SearchOptions())
    figures["run"] = {
        "seconds": time.perf_counter() - started,
        "passes": passes["count"],
        "stop_index": run.stop_index,
        "eps_total": run.eps_total,
        "peak_mb": rss_mb()[0],
    }
    return figures


def child(*args: str) -> dict:
    """Run this script with ``args`` in a fresh process and return the JSON it prints last."""
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_layout(layout: str, args: argparse.Namespace) -> dict[str, object]:
    """Write one layout (or reuse the files a run with --keep left), measure it, delete it (unless --keep)."""
    folder = args.out / layout
    common = ["--features", str(args.features), "--out", str(folder)]
    try:
        if len(list(folder.glob("*.parquet"))) != LAYOUTS[layout][0]:
            shutil.rmtree(folder, ignore_errors=True)
            seconds = write(folder, layout, args.rows, args.features)
            print(f"({layout}) written in {seconds:.0f} s", flush=True)
        size = sum(path.stat().st_size for path in folder.glob("*.parquet"))
        print(f"({layout}) {DESCRIPTION[layout]}: {size / 1e9:.2f} GB on disk", flush=True)
        result = {"speed": child("--measure", "speed", "--repeat", str(args.repeat), *common)}
        print(f"({layout}) speed {result['speed']}", flush=True)
        for kind in ("ridge", "logistic"):
            result[kind] = child("--measure", kind, *common)
            print(f"({layout}) {kind} {result[kind]}", flush=True)
        result["chunks"] = {}
        for chunk in CHUNKS_MB:
            figures = child("--measure", "ridge", "--chunk-mb", str(chunk), *common)
            result["chunks"][chunk] = figures["peak_mb"] - figures["base_mb"]
        print(f"({layout}) growth by chunk {result['chunks']}", flush=True)
        return result
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


def report(results: dict[str, dict], repeat: int) -> None:
    """The tables of docs/benchmarks.md#parquet-larger-than-memory."""
    workers = os.cpu_count()
    print(
        "\n| layout | read_table pass s | ridge s | ridge / read_table (CPU) | ridge / record batches alone (CPU) "
        "| ridge peak RSS MB (before) | logistic: passes, s, / read_table | logistic peak RSS MB "
        "| noise reduction, logistic: passes, s |\n| --- |" + " --- |" * 8
    )
    for layout, result in results.items():
        best = {name: min(times) for name, times in result["speed"].items()}
        ridge, logistic = result["ridge"], result["logistic"]
        print(
            f"| ({layout}) {DESCRIPTION[layout]} | {best['read_table']:.2f} | {best['ridge']:.2f} "
            f"| {best['ridge'] / best['read_table']:.2f} ({best['ridge_cpu'] / best['read_table_cpu']:.2f}) "
            f"| {best['ridge'] / best['record_batches']:.2f} ({best['ridge_cpu'] / best['record_batches_cpu']:.2f}) "
            f"| {ridge['peak_mb']:.0f} ({ridge['base_mb']:.0f}) "
            f"| {logistic['passes']}, {best['logistic']:.1f}, {best['logistic'] / best['read_table']:.2f} "
            f"| {logistic['peak_mb']:.0f} | {logistic['run']['passes']}, {logistic['run']['seconds']:.1f} |"
        )
    print(f"\nSpeed: best of {repeat} alternated rounds in one process; in brackets, the ratio of CPU seconds.")
    print(f"\nGrowth of the peak RSS over the RSS before a ridge pass, MB ({workers} workers):\n")
    chunks = " | ".join(f"chunk {chunk:g} MB" for chunk in CHUNKS_MB)
    print(f"| layout | {chunks} | fit: workers × (r + c × chunk) |\n| --- |" + " --- |" * (len(CHUNKS_MB) + 1))
    for layout, result in results.items():
        growth = [result["chunks"][chunk] for chunk in CHUNKS_MB]
        slope, intercept = np.polyfit(CHUNKS_MB, growth, 1)
        figures = " | ".join(f"{value:.0f}" for value in growth)
        print(f"| ({layout}) | {figures} | c = {slope / workers:.2f}, r = {intercept / workers:.0f} MB |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layouts", default="i,ii,iii", help="which layouts (default: %(default)s)")
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3, help="alternated speed rounds (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the Parquet files (default: %(default)s)")
    parser.add_argument("--keep", action="store_true", help="keep the Parquet files (a later run reuses them)")
    parser.add_argument("--measure", choices=("speed", "ridge", "logistic"), help=argparse.SUPPRESS)
    parser.add_argument("--chunk-mb", type=float, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure == "speed":
        print(json.dumps(speed(args.out, args.features, args.repeat)))
        return
    if args.measure:
        from accfirst.scale.chunks import CHUNK_MB

        print(json.dumps(measure(args.measure, args.out, args.features, args.chunk_mb or CHUNK_MB)))
        return
    layouts = args.layouts.split(",")
    unknown = set(layouts) - set(LAYOUTS)
    if unknown:
        raise SystemExit(f"unknown layouts {sorted(unknown)}; choose from {', '.join(LAYOUTS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    need = args.rows * (args.features + 2) * 8
    free = shutil.disk_usage(args.out).free
    if free < 2 * need:
        raise SystemExit(f"needs about {need / 1e9:.1f} GB on disk (twice that free); {free / 1e9:.1f} GB free")
    results = {layout: bench_layout(layout, args) for layout in layouts}
    report(results, args.repeat)


if __name__ == "__main__":
    main()
