"""Out of core (accfirst.scale): problems from Parquet equal the in-memory ones, chunk by chunk, in every layout."""

from __future__ import annotations

import ast
import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from accfirst import AccFirstError, DataError, LogisticProblem, RidgeProblem
from accfirst.cli import main
from accfirst.datasets.preprocess import scale_rows, scale_target
from accfirst.erm.logistic import InMemoryRows, loss_gradient_sums
from accfirst.scale import problem_from_parquet
from accfirst.scale.chunks import chunk_rows

FEATURES = ["a", "b", "c", "d"]
ROOT = Path(__file__).resolve().parents[1]
# A chunk of 336 rows (4 features and the target): batches end inside row groups and files.
SMALL_CHUNK_MB = 0.0257


def make_frame(rows: int, rng: np.random.Generator) -> pd.DataFrame:
    """Features in natural units (‖x‖₁ up to ~8), a ridge target y, a boolean label and a text label."""
    X = rng.normal(scale=0.8, size=(rows, len(FEATURES)))
    frame = pd.DataFrame(X, columns=FEATURES)
    frame["y"] = X @ [0.6, -0.4, 0.2, 0.0] + rng.normal(scale=0.3, size=rows)
    frame["label"] = rng.random(rows) < 1 / (1 + np.exp(-X @ [2.0, -1.0, 1.0, 0.0]))
    frame["kind"] = np.where(frame["label"], "spam", "ham")
    return frame


def write_parts(folder: Path, parts: int, rows: int, seed: int = 0, row_group: int | None = None) -> pd.DataFrame:
    """``parts`` Parquet files of ``rows`` rows each (row groups of ``row_group`` rows); returns them all."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    frames = []
    for part in range(parts):
        frame = make_frame(rows, rng)
        frame.to_parquet(folder / f"part{part:02d}.parquet", row_group_size=row_group)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


# The benchmark's three layouts in miniature (files, rows per file, rows per row group), and odd ones.
LAYOUTS = {
    "many small files": (8, 1500, None),
    "few files, one large row group each": (2, 6000, None),
    "one file, many row groups": (1, 12000, 1000),
    "uneven row groups and an empty file": (3, 4321, 777),
}


@pytest.fixture(scope="module", params=sorted(LAYOUTS))
def layout(request, tmp_path_factory) -> tuple[Path, pd.DataFrame]:
    files, rows, row_group = LAYOUTS[request.param]
    folder = tmp_path_factory.mktemp("layout")
    frame = write_parts(folder, files, rows, seed=len(request.param), row_group=row_group)
    if request.param.endswith("empty file"):
        frame.iloc[:0].to_parquet(folder / "part99-empty.parquet")
    return folder, frame


@pytest.fixture(scope="module")
def parquet(tmp_path_factory) -> tuple[Path, pd.DataFrame]:
    folder = tmp_path_factory.mktemp("parquet")
    return folder, write_parts(folder, parts=5, rows=3000, row_group=1000)


def in_memory_features(frame: pd.DataFrame, bound: float) -> np.ndarray:
    return scale_rows(frame[FEATURES].to_numpy(dtype=np.float64, copy=True), bound)


class CountedRows(InMemoryRows):
    """Rows in memory whose passes are counted."""

    passes = 0

    def reduce(self, statistic, combine=None):
        self.passes += 1
        return super().reduce(statistic, combine)


def assert_equal_to_1e10(built: np.ndarray, direct: np.ndarray) -> None:
    """Equal to 1e-10 of the largest entry (an entry near zero has no relative precision)."""
    np.testing.assert_allclose(built, direct, rtol=1e-10, atol=1e-10 * float(np.max(np.abs(direct))))


@pytest.mark.parametrize("radius", [None, 0.6])
def test_ridge_statistics_equal_numpys_in_every_layout(layout, radius, monkeypatch) -> None:
    """A, b, c and n summed chunk by chunk equal numpy's on the whole table, to 1e-10.

    Chunks of 336 rows, and parts of at least 2,500 rows (several tasks per file).
    """
    monkeypatch.setattr("accfirst.scale.files.PART_ROWS", 2500)
    folder, frame = layout
    built = problem_from_parquet(
        str(folder / "*.parquet"),
        "y",
        FEATURES,
        lam=0.01,
        feature_bound=3.0,
        target_bound=2.0,
        radius=radius,
        chunk_mb=SMALL_CHUNK_MB,
    )
    X = in_memory_features(frame, 3.0)
    y = scale_target(frame["y"].to_numpy(dtype=np.float64, copy=True), 2.0)
    assert built.n == len(frame) and built.radius_binds == (radius is not None)
    assert_equal_to_1e10(built.A, X.T @ X)
    assert_equal_to_1e10(built.b, X.T @ y)
    assert built.c == pytest.approx(y @ y, rel=1e-10)
    assert_equal_to_1e10(built.theta_star, RidgeProblem(X, y, 0.01, radius).theta_star)


def test_logistic_statistics_equal_numpys_in_every_layout(layout) -> None:
    """G, θ*, L(θ*) and the largest margin from chunks of 336 rows equal numpy's on the whole table.

    θ*'s last Newton step is certified without a pass: its largest margin is an upper bound
    (within ‖s‖∞ of the true one), its gradient is still ≤ 1e-10, and its loss is the true one
    to rounding.
    """
    folder, frame = layout
    built = problem_from_parquet(folder, "label", FEATURES, task="logistic", feature_bound=3.0, chunk_mb=SMALL_CHUNK_MB)
    X = in_memory_features(frame, 3.0)
    y = np.where(frame["label"], 1.0, -1.0)
    direct = LogisticProblem(X, y, 0.005)
    exact = CountedRows(X * y[:, None])
    LogisticProblem.from_rows(exact, 0.005)
    # A ridge-like first pass, and the last Newton step certified without a pass: one fewer.
    assert built.n == len(frame) and built._rows.passes == exact.passes - 1
    assert_equal_to_1e10(built.gram, X.T @ X / len(frame))
    assert_equal_to_1e10(built.theta_star, direct.theta_star)
    _, weighted = loss_gradient_sums(X * y[:, None], built.theta_star[None, :])
    assert np.linalg.norm(-weighted[0] / len(y) + 0.005 * built.theta_star) <= 1e-10
    assert built.loss(built.theta_star) == pytest.approx(direct.loss(direct.theta_star), abs=1e-14)
    assert direct.max_margin_star <= built.max_margin_star <= direct.max_margin_star + 1e-4
    thetas = direct.theta_star + np.random.default_rng(3).normal(scale=0.5, size=(3, 4))
    np.testing.assert_allclose(built.excess_risk(thetas), direct.excess_risk(thetas), rtol=1e-9)


def test_logistic_with_a_text_label_and_a_binding_radius(parquet) -> None:
    folder, frame = parquet
    built = problem_from_parquet(
        folder, "kind", FEATURES, task="logistic", feature_bound=3.0, positive_class="spam", radius=0.5
    )
    direct = LogisticProblem(in_memory_features(frame, 3.0), np.where(frame["label"], 1.0, -1.0), 0.005, 0.5)
    assert built.radius_binds and direct.radius_binds
    np.testing.assert_allclose(built.theta_star, direct.theta_star, rtol=1e-9)
    thetas = direct.theta_star + np.random.default_rng(3).normal(scale=0.2, size=(3, 4))
    np.testing.assert_allclose(built.excess_risk(thetas), direct.excess_risk(thetas), rtol=1e-8)
    # A sweep's workers receive the problem pickled, and read the files themselves.
    again = pickle.loads(pickle.dumps(built))
    np.testing.assert_allclose(again.excess_risk(thetas), built.excess_risk(thetas), rtol=1e-12)


def test_features_default_to_every_other_column_and_may_be_integers_or_booleans(tmp_path) -> None:
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"n": rng.integers(-3, 4, 500), "f": rng.random(500) < 0.5, "y": rng.normal(size=500)})
    frame.astype({"n": "int32"}).to_parquet(tmp_path / "mixed.parquet")
    built = problem_from_parquet(tmp_path, "y", feature_bound=4.0, target_bound=3.0)
    X = scale_rows(frame[["n", "f"]].to_numpy(dtype=np.float64), 4.0)
    y = scale_target(frame["y"].to_numpy(dtype=np.float64, copy=True), 3.0)
    assert_equal_to_1e10(built.A, X.T @ X)
    assert_equal_to_1e10(built.b, X.T @ y)


def test_a_pandas_index_is_no_feature_and_a_categorical_label_is_read(tmp_path) -> None:
    rng = np.random.default_rng(6)
    frame = make_frame(600, rng).set_index(pd.Index(rng.permutation(600), name="id"))
    frame.astype({"kind": "category"})[[*FEATURES, "kind"]].to_parquet(tmp_path / "indexed.parquet")
    built = problem_from_parquet(tmp_path, "kind", task="logistic", feature_bound=3.0, positive_class="spam")
    direct = LogisticProblem(in_memory_features(frame, 3.0), np.where(frame["label"], 1.0, -1.0), 0.005)
    assert built.p == len(FEATURES)
    assert_equal_to_1e10(built.theta_star, direct.theta_star)


def test_a_column_named_like_an_identifier_is_no_feature_unless_chosen(tmp_path) -> None:
    """The in-memory preparation's rule (tests/datasets/test_identifiers.py), from the names in the footers."""
    frame = make_frame(600, np.random.default_rng(7))
    frame.assign(customer_id=np.arange(600.0), ID=[f"c{i}" for i in range(600)])[
        [*FEATURES, "customer_id", "ID", "y"]
    ].to_parquet(tmp_path / "ids.parquet", index=False)
    built = problem_from_parquet(tmp_path, "y", feature_bound=4.0, target_bound=3.0)
    X = in_memory_features(frame, 4.0)
    assert_equal_to_1e10(built.A, X.T @ X)
    chosen = problem_from_parquet(tmp_path, "y", [*FEATURES, "customer_id"], feature_bound=4.0, target_bound=3.0)
    assert chosen.p == len(FEATURES) + 1


def test_a_chunk_holds_the_numbers_it_is_allowed() -> None:
    assert chunk_rows(16, 21) == 16 * 2**20 // (16 * 21)
    assert chunk_rows(1e-9, 5) == 1
    for bad in (0, -1.0, float("nan"), float("inf"), True, "16"):
        with pytest.raises(AccFirstError, match="chunk_mb must be a number of megabytes > 0"):
            chunk_rows(bad, 5)


def write_table(frame: pd.DataFrame, path: Path, row_group: int | None = None) -> None:
    """``frame`` as Parquet, NaN kept as NaN (pandas would write it as a gap, a null)."""
    pq.write_table(pa.table({name: frame[name].to_numpy() for name in frame}), path, row_group_size=row_group)


def _bad_inputs(folder: Path) -> dict[str, tuple[dict, str]]:
    """Each bad input: (keywords of problem_from_parquet, the message it must give).

    A folder per case: a good file (a-good.parquet), then the bad one (b-bad.parquet), row
    groups of 700 rows.
    """
    good = make_frame(2000, np.random.default_rng(9))
    cases: dict[str, tuple[dict, str]] = {}

    def case(name: str, bad: pd.DataFrame | pa.Table | bytes, keywords: dict, message: str, first=good) -> None:
        sub = folder / name
        sub.mkdir()
        write_table(first, sub / "a-good.parquet", 700)
        path = sub / "b-bad.parquet"
        if isinstance(bad, bytes):
            path.write_bytes(bad)
        elif isinstance(bad, pa.Table):
            pq.write_table(bad, path, row_group_size=700)
        else:
            write_table(bad, path, 700)
        cases[name] = ({"path_or_glob": sub, **keywords}, message.replace("BAD", re.escape(repr(str(path)))))

    ridge = {"target": "y", "features": FEATURES, "feature_bound": 3.0, "target_bound": 2.0}
    logistic = {"target": "label", "features": FEATURES, "task": "logistic", "feature_bound": 3.0}
    nan = good.copy()
    nan.loc[1500, "c"] = np.nan
    case("nan", nan, ridge, r"BAD, row 1,500, column 'c': NaN or infinite; out of core nothing is imputed")
    case("nan-logistic", nan, logistic, r"BAD, row 1,500, column 'c': NaN or infinite")
    infinite = good.copy()
    infinite.loc[1999, "y"] = -np.inf
    case("inf-target", infinite, ridge, r"BAD, row 1,999, column 'y': NaN or infinite")
    gap = pa.table({name: pa.array(good[name].to_numpy()) for name in good})
    gap = gap.set_column(1, "b", pa.array([None if i == 42 else v for i, v in enumerate(good["b"])], pa.float64()))
    case("gap", gap, ridge, r"BAD, row 42, column 'b': a missing value")
    case("missing-target", good.drop(columns="y"), ridge, r"the files' schemas differ: BAD has no column 'y'")
    case(
        "text-feature",
        good.assign(c=good["c"].astype(str)),
        ridge,
        r"the files' schemas differ: column 'c' is number in .*a-good.parquet' but text in BAD",
    )
    numeric = good[[*FEATURES, "y"]]
    case(
        "extra-column",
        numeric.assign(extra=1.0),
        {**ridge, "features": None},
        r"the files' schemas differ: BAD has column\(s\) \['extra'\]",
        first=numeric,
    )
    labels = good.assign(label=good["label"].astype(int))
    case(
        "labels",
        labels.assign(label=2 * labels["label"]),
        logistic,
        r"BAD: the logistic target 'label' must hold −1/\+1, 0/1 or booleans",
        first=labels,
    )
    case("not-parquet", b"not a parquet file", ridge, r"cannot read BAD as Parquet")
    return cases


BAD_NAMES = [
    "nan",
    "nan-logistic",
    "inf-target",
    "gap",
    "missing-target",
    "text-feature",
    "extra-column",
    "labels",
    "not-parquet",
]


@pytest.fixture(scope="module")
def bad_inputs(tmp_path_factory) -> dict[str, tuple[dict, str]]:
    return _bad_inputs(tmp_path_factory.mktemp("bad"))


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_bad_file_among_good_ones_is_named_with_its_column(bad_inputs, name) -> None:
    """Each refusal names the file (and the row, where the fault is in the rows) and the column."""
    keywords, message = bad_inputs[name]
    with pytest.raises(DataError, match=message):
        problem_from_parquet(**keywords, chunk_mb=SMALL_CHUNK_MB)


@pytest.mark.parametrize("name", ["nan", "missing-target"])
def test_a_bad_file_stops_the_command_before_any_privacy_is_spent(bad_inputs, name, capsys) -> None:
    """The CLI builds the problem first: a bad file ends the run with one line and no release."""
    keywords, message = bad_inputs[name]
    folder = str(keywords["path_or_glob"])
    argv = ["run", "--parquet", folder, "--target", "y", "--features", ",".join(FEATURES), "--alpha", "0.1"]
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--feature-bound", "3", "--target-bound", "2"])
    assert exit_info.value.code == 2
    printed = capsys.readouterr()
    assert printed.out == "" and "RunResult" not in printed.err
    error = printed.err.strip().splitlines()[-1]
    assert error.startswith("accfirst: error: ") and re.search(message, error)


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"target": "y"}, "feature_bound is required.*data's largest row norm is not available"),
        ({"target": "y", "feature_bound": 3.0}, "ridge needs target_bound"),
        ({"target": "nope", "feature_bound": 3.0, "target_bound": 2.0}, r"target 'nope' is not a column of '.*part00"),
        (
            {"target": "label", "feature_bound": 3.0, "task": "logistic", "features": ["a", "kind"]},
            r"feature columns must be numeric; \['kind'\] is text in '.*part00.parquet'",
        ),
        (
            {"target": "kind", "feature_bound": 3.0, "task": "logistic", "features": FEATURES},
            r"the logistic target 'kind' holds text; name the label mapped to \+1",
        ),
        ({"target": "y", "features": ["a", "a"], "feature_bound": 3.0, "target_bound": 2.0}, "must be distinct"),
        ({"target": "y", "feature_bound": -1.0, "target_bound": 2.0}, "feature_bound .* finite number > 0"),
    ],
)
def test_refusals_say_what_to_do(parquet, keywords, message) -> None:
    folder, _ = parquet
    with pytest.raises(DataError, match=message):
        problem_from_parquet(folder, **keywords)


def test_paths_that_name_no_parquet_file_are_refused(parquet, tmp_path) -> None:
    folder, _ = parquet
    bounds = {"feature_bound": 3.0, "target_bound": 2.0}
    with pytest.raises(DataError, match=r"no Parquet files match '.*\*\.parq'"):
        problem_from_parquet(str(folder / "*.parq"), "y", **bounds)
    with pytest.raises(DataError, match="has no Parquet files"):
        problem_from_parquet(tmp_path, "y", **bounds)
    with pytest.raises(DataError, match="no Parquet file or folder at"):
        problem_from_parquet(tmp_path / "nowhere.parquet", "y", **bounds)
    with pytest.raises(DataError, match="no Parquet files given"):
        problem_from_parquet([], "y", **bounds)
    make_frame(10, np.random.default_rng(1)).iloc[:0].to_parquet(tmp_path / "empty.parquet")
    with pytest.raises(DataError, match="the Parquet files have no rows"):
        problem_from_parquet(tmp_path, "y", FEATURES, **bounds)


def test_a_distributed_cluster_of_two_workers_gives_the_same_problems(parquet) -> None:
    """The same passes on a dask.distributed LocalCluster (two worker processes): about 5 s."""
    distributed = pytest.importorskip("distributed")
    folder, _ = parquet
    local_ridge = problem_from_parquet(folder, "y", FEATURES, feature_bound=3.0, target_bound=2.0)
    local = problem_from_parquet(folder, "label", FEATURES, task="logistic", feature_bound=3.0)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0") as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://127.0.0.1")
        ridge = problem_from_parquet(folder, "y", FEATURES, feature_bound=3.0, target_bound=2.0, scheduler=address)
        remote = problem_from_parquet(folder, "label", FEATURES, task="logistic", feature_bound=3.0, scheduler=address)
        with pytest.raises(DataError, match="NaN or infinite"):
            bad = make_frame(100, np.random.default_rng(2))
            bad.loc[7, "a"] = np.inf
            bad.to_parquet(folder.parent / "bad-for-cluster.parquet")
            problem_from_parquet(
                folder.parent / "bad-for-cluster.parquet",
                "y",
                FEATURES,
                feature_bound=3.0,
                target_bound=2.0,
                scheduler=address,
            )
    np.testing.assert_allclose(ridge.A, local_ridge.A, rtol=1e-12)
    np.testing.assert_allclose(remote.theta_star, local.theta_star, rtol=1e-10)


def test_a_local_scheduler_is_named_and_dask_distributed_is_left_unimported(parquet) -> None:
    """Dask imports dask.distributed (a second) to resolve a scheduler's name: accfirst passes the function."""
    folder, _ = parquet
    keywords = {"target": "y", "features": FEATURES, "feature_bound": 3.0, "target_bound": 2.0}
    threads = problem_from_parquet(folder, **keywords)
    synchronous = problem_from_parquet(folder, **keywords, scheduler="synchronous")
    np.testing.assert_allclose(synchronous.A, threads.A, rtol=1e-12)
    with pytest.raises(AccFirstError, match=r"scheduler must be one of \[.*'threads'\] or a dask.distributed address"):
        problem_from_parquet(folder, **keywords, scheduler="nope")
    probe = (
        "import sys; from accfirst.scale import problem_from_parquet as build; "
        f"build({str(folder)!r}, 'y', {FEATURES!r}, feature_bound=3.0, target_bound=2.0); "
        "print('distributed' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.strip() == "False"


def test_a_cluster_without_workers_is_refused_rather_than_waited_for(parquet) -> None:
    distributed = pytest.importorskip("distributed")
    folder, _ = parquet
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as cluster:
        with pytest.raises(AccFirstError, match="has no workers: start some"):
            problem_from_parquet(
                folder, "y", FEATURES, feature_bound=3.0, target_bound=2.0, scheduler=cluster.scheduler_address
            )


MEASURE = """
import json, sys
from accfirst.scale import problem_from_parquet

def peak_and_reset():
    # VmHWM is this process's own peak (ru_maxrss would carry the parent's); writing 5 to clear_refs resets it.
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    open("/proc/self/clear_refs", "w").write("5")
    return int(status["VmHWM"].split()[0]), int(status["VmRSS"].split()[0])

folder, chunk_mb = sys.argv[1], float(sys.argv[2])
features = ["a", "b", "c", "d"]
build = {
    "ridge": dict(target="y", feature_bound=3.0, target_bound=2.0),
    "logistic": dict(target="label", task="logistic", feature_bound=3.0),
}
# The small file first: the imports, thread pools, the reader's buffers and the allocator's first pages.
for keywords in build.values():
    problem_from_parquet(f"{folder}/small.parquet", features=features, chunk_mb=chunk_mb, **keywords)
_, base = peak_and_reset()
figures = {"base_kib": base}
for task, keywords in build.items():
    problem = problem_from_parquet(f"{folder}/large.parquet", features=features, chunk_mb=chunk_mb, **keywords)
    figures[task + "_kib"] = peak_and_reset()[0] - base
    figures["n"] = problem.n
print(json.dumps(figures))
"""


def write_one_row_group(path: Path, rows: int, seed: int) -> None:
    """One Parquet file of ``rows`` rows (a–d, y, label) in a single row group: a layout a whole-file reader reads at once."""
    rng = np.random.default_rng(seed)
    X = rng.normal(scale=0.8, size=(len(FEATURES), rows))
    columns = {name: X[j] for j, name in enumerate(FEATURES)}
    columns["y"] = 0.6 * X[0] - 0.4 * X[1] + rng.normal(scale=0.3, size=rows)
    columns["label"] = X[0] > rng.logistic(size=rows)
    pq.write_table(pa.table(columns), path, row_group_size=rows)


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="measures the peak RSS through Linux's /proc")
def test_memory_stays_within_the_allowance_on_a_file_four_times_larger(tmp_path) -> None:
    """A ridge problem and a logistic one from one 5,000,000-row file in a single row group.

    The file holds 200 MB of float64 numbers (a–d, y); the allowance is 40 MB over the base
    after a warm-up on a 400,000-row file written alike, with chunks of 4 MB per worker.
    Measured growth: ridge 12 MB, logistic (all its passes) 20–29 MB; with 64 MB chunks 91 and
    125 MB, and reading the file whole grows it by more than the file. About 10 s.
    """
    write_one_row_group(tmp_path / "small.parquet", 400_000, seed=1)
    write_one_row_group(tmp_path / "large.parquet", 5_000_000, seed=2)
    allowance_kib = 40 * 1024
    assert 5_000_000 * 5 * 8 / 1024 >= 4 * allowance_kib
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(tmp_path), "4"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["n"] == 5_000_000
    assert figures["ridge_kib"] < allowance_kib, figures
    assert figures["logistic_kib"] < allowance_kib, figures


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
                assert name.startswith("accfirst/scale/"), f"{name} imports {module}"
            if module.split(".")[:2] == ["accfirst", "scale"] and not name.startswith("accfirst/scale/"):
                assert name == "accfirst/cli/data.py" and not top_level, f"{name} imports accfirst.scale"
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


def test_newton_passes_are_counted(parquet) -> None:
    """Every reduce is one pass over the files; a batch of hypotheses' losses is one more."""
    folder, _ = parquet
    built = problem_from_parquet(folder, "label", FEATURES, task="logistic", feature_bound=3.0)
    rows = built._rows
    passes = rows.passes
    built.loss(np.zeros((3, 4)))
    assert rows.passes == passes + 1
