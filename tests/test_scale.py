"""Out of core (accfirst.scale): problems from Parquet equal the in-memory ones; memory stays bounded."""

from __future__ import annotations

import ast
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from accfirst import DataError, LogisticProblem, RidgeProblem
from accfirst.datasets.preprocess import scale_rows, scale_target
from accfirst.scale import problem_from_parquet

FEATURES = ["a", "b", "c", "d"]
ROOT = Path(__file__).resolve().parents[1]


def write_parts(folder: Path, parts: int, rows: int, seed: int = 0, row_group: int | None = None) -> pd.DataFrame:
    """``parts`` Parquet files of ``rows`` rows: features in natural units (‖x‖₁ up to ~8), y, and labels."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    frames = []
    for part in range(parts):
        X = rng.normal(scale=0.8, size=(rows, len(FEATURES)))
        frame = pd.DataFrame(X, columns=FEATURES)
        frame["y"] = X @ [0.6, -0.4, 0.2, 0.0] + rng.normal(scale=0.3, size=rows)
        frame["label"] = rng.random(rows) < 1 / (1 + np.exp(-X @ [2.0, -1.0, 1.0, 0.0]))
        frame["kind"] = np.where(frame["label"], "spam", "ham")
        frame.to_parquet(folder / f"part{part:02d}.parquet", row_group_size=row_group)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


@pytest.fixture(scope="module")
def parquet(tmp_path_factory) -> tuple[Path, pd.DataFrame]:
    folder = tmp_path_factory.mktemp("parquet")
    return folder, write_parts(folder, parts=5, rows=3000, row_group=1000)


def in_memory_features(frame: pd.DataFrame, bound: float) -> np.ndarray:
    return scale_rows(frame[FEATURES].to_numpy(dtype=np.float64, copy=True), bound)


@pytest.mark.parametrize("radius", [None, 0.6])
def test_ridge_statistics_equal_the_in_memory_ones(parquet, radius) -> None:
    folder, frame = parquet
    built = problem_from_parquet(
        str(folder / "*.parquet"), "y", FEATURES, lam=0.01, feature_bound=3.0, target_bound=2.0, radius=radius
    )
    y = scale_target(frame["y"].to_numpy(dtype=np.float64, copy=True), 2.0)
    direct = RidgeProblem(in_memory_features(frame, 3.0), y, 0.01, radius)
    assert built.n == direct.n == 15_000 and built.radius_binds == direct.radius_binds == (radius is not None)
    np.testing.assert_allclose(built.A, direct.A, rtol=1e-10)
    np.testing.assert_allclose(built.b, direct.b, rtol=1e-10)
    assert built.c == pytest.approx(direct.c, rel=1e-10)
    np.testing.assert_allclose(built.theta_star, direct.theta_star, rtol=1e-10)


@pytest.mark.parametrize(("target", "positive_class"), [("label", None), ("kind", "spam")])
def test_logistic_theta_star_equals_the_in_memory_one(parquet, target, positive_class) -> None:
    folder, frame = parquet
    built = problem_from_parquet(
        folder, target, FEATURES, task="logistic", feature_bound=3.0, positive_class=positive_class
    )
    direct = LogisticProblem(in_memory_features(frame, 3.0), np.where(frame["label"], 1.0, -1.0), 0.005)
    np.testing.assert_allclose(built.theta_star, direct.theta_star, rtol=1e-8)
    np.testing.assert_allclose(built.gram, direct.gram, rtol=1e-10)
    assert built.max_margin_star == pytest.approx(direct.max_margin_star, rel=1e-10)
    thetas = direct.theta_star + np.random.default_rng(3).normal(scale=0.5, size=(3, 4))
    np.testing.assert_allclose(built.excess_risk(thetas), direct.excess_risk(thetas), rtol=1e-8)
    # A sweep's workers receive the problem pickled, and read the files themselves.
    again = pickle.loads(pickle.dumps(built))
    np.testing.assert_allclose(again.excess_risk(thetas), built.excess_risk(thetas), rtol=1e-12)


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"target": "y"}, "feature_bound is required.*data's largest row norm is not available"),
        ({"target": "y", "feature_bound": 3.0}, "ridge needs target_bound"),
        ({"target": "nope", "feature_bound": 3.0, "target_bound": 2.0}, "target 'nope' is not a column"),
        (
            {"target": "label", "feature_bound": 3.0, "task": "logistic", "features": ["a", "kind"]},
            r"feature columns must be numeric; \['kind'\]",
        ),
        (
            {"target": "kind", "feature_bound": 3.0, "task": "logistic", "features": FEATURES},
            "name the one mapped to \\+1",
        ),
        ({"target": "y", "feature_bound": -1.0, "target_bound": 2.0}, "feature_bound .* finite number > 0"),
    ],
)
def test_refusals_say_what_to_do(parquet, keywords, message) -> None:
    folder, _ = parquet
    with pytest.raises(DataError, match=message):
        problem_from_parquet(folder, **keywords)


def test_rows_with_gaps_are_refused(tmp_path) -> None:
    frame = pd.DataFrame({"a": [0.1, np.nan, 0.2], "y": [0.1, 0.2, 0.3]})
    frame.to_parquet(tmp_path / "gaps.parquet")
    with pytest.raises(DataError, match=r"column\(s\) a have NaN.*nothing is imputed"):
        problem_from_parquet(tmp_path, "y", feature_bound=1.0, target_bound=1.0)


def test_a_distributed_cluster_gives_the_same_problem(parquet) -> None:
    distributed = pytest.importorskip("distributed")
    folder, _ = parquet
    local = problem_from_parquet(folder, "label", FEATURES, task="logistic", feature_bound=3.0)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, protocol="tcp", dashboard_address=None
    ) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1")
        remote = problem_from_parquet(
            folder, "label", FEATURES, task="logistic", feature_bound=3.0, scheduler=cluster.scheduler_address
        )
    np.testing.assert_allclose(remote.theta_star, local.theta_star, rtol=1e-10)


MEASURE = """
import json, sys
from functools import partial
import numpy as np
from accfirst.erm.problems import NEWTON_COMBINE, newton_sums
from accfirst.scale import ParquetRows, problem_from_parquet

def peak_and_reset():
    # VmHWM is this process's own peak (ru_maxrss would carry the parent's); writing 5 to clear_refs resets it.
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    open("/proc/self/clear_refs", "w").write("5")
    return int(status["VmHWM"].split()[0]), int(status["VmRSS"].split()[0])

large = sys.argv[1]
features = ["a", "b", "c", "d"]
# Two of the files first: the imports, thread pools and reader buffers that any pass needs.
problem_from_parquet([f"{large}/part0{i}.parquet" for i in (0, 1)], "y", features, feature_bound=3.0, target_bound=2.0)
_, base = peak_and_reset()
ridge = problem_from_parquet(large, "y", features, feature_bound=3.0, target_bound=2.0)
ridge_peak, _ = peak_and_reset()
# One logistic Newton pass (loss, gradient, Hessian): the pass LogisticProblem makes per iteration.
rows = ParquetRows(large, features, "label", 3.0, None, None)
rows.reduce(partial(newton_sums, theta=np.zeros(4)), NEWTON_COMBINE)
logistic_peak, _ = peak_and_reset()
print(json.dumps({"n": ridge.n, "ridge_kib": ridge_peak - base, "logistic_kib": logistic_peak - base}))
"""


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="measures the peak RSS through Linux's /proc")
def test_memory_stays_bounded_on_data_larger_than_the_allowance(tmp_path) -> None:
    """A ridge pass and a logistic Newton pass over 4,000,000 rows grow the peak RSS by little.

    100 files of 40,000 rows; the passes read 220 MB of float64 values. After a warm-up on
    two of the files (imports, thread pools, reader buffers), measured growth 20–25 MB;
    holding the data (``.compute()``) grew it by 420 MB. The allowance is a quarter of the
    data. About 15 CPU-seconds (writing the files is half of it).
    """
    large = tmp_path / "large"
    write_parts(large, parts=100, rows=40_000, seed=1)
    data_kib = 4_000_000 * 7 * 8 / 1024  # the float64 values a pass reads (a–d, y, label as float)
    result = subprocess.run(
        [sys.executable, "-c", MEASURE, str(large)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["n"] == 4_000_000
    assert figures["ridge_kib"] < data_kib / 4, figures
    assert figures["logistic_kib"] < data_kib / 4, figures


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(module, at module level) for every import in a source file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, id(node) in top))
    return found


def test_dask_reaches_neither_the_app_nor_the_rest_of_the_package() -> None:
    """Only accfirst.scale imports Dask, and only the CLI's --parquet path imports it, lazily.

    The hosted app installs requirements.txt (Dask included) but must not pay Dask's import.
    """
    sources = [*ROOT.glob("accfirst/**/*.py"), *ROOT.glob("ui/**/*.py"), *ROOT.glob("pages/**/*.py"), ROOT / "app.py"]
    for path in sources:
        name = path.relative_to(ROOT).as_posix()
        for module, top_level in _imports(path):
            if module.split(".")[0] in ("dask", "distributed"):
                assert name == "accfirst/scale.py", f"{name} imports {module}"
            if module == "accfirst.scale":
                assert name == "accfirst/cli.py" and not top_level, f"{name} imports accfirst.scale"
    probe = "import sys, accfirst, accfirst.cli, accfirst.estimators; print(sorted({'dask', 'distributed'} & set(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.stdout.strip() == "[]"
