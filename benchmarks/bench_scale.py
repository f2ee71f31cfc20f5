"""Data larger than memory (issue 13): problems from Parquet with Dask. Prints figures; asserts nothing.

Writes a synthetic dataset of 20,000,000 rows × 20 features (plus a ridge target and a
logistic label; 3.2 GB as float64 features) in Parquet parts, then, each in a fresh process
so that its peak RSS is its own:

- one pyarrow pass over the same files and columns (``pyarrow.parquet.read_table`` per file,
  the data decoded and dropped): the yardstick;
- the ridge problem (``accfirst.scale.problem_from_parquet``: XᵀX, Xᵀy, yᵀy, n in one pass);
- the logistic problem (θ* by Newton, one pass per iteration);
- a noise-reduction run on each (ridge: no pass; logistic: one pass per exact loss).

Goals: peak RSS ≤ 1 GB (the data never held whole) and the ridge pass ≤ 2× the pyarrow
pass. Dask's local threaded scheduler. The data go to a folder under the system's
temporary directory (--out) and are deleted at the end unless --keep. Speed figures on a
shared machine are rough: the pyarrow and ridge passes alternate (--repeat) and the best is compared.

Usage: python benchmarks/bench_scale.py [--rows 20000000] [--features 20] [--parts 80] [--repeat 3]
       [--out DIR] [--keep]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

OUT = Path(tempfile.gettempdir()) / "accfirst-bench-scale"
FEATURE_BOUND, TARGET_BOUND = 40.0, 10.0
ALPHA, LAM = 0.001, 0.005


def write(folder: Path, rows: int, features: int, parts: int) -> float:
    """The synthetic parts: heavy-tailed features (‖x‖₁ ≈ 18 on average), y and a label; returns seconds."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    rng = np.random.default_rng(2017)
    beta, weights = rng.normal(size=features), rng.normal(scale=0.3, size=features)
    for part, size in enumerate(np.diff(np.linspace(0, rows, parts + 1).astype(int))):
        X = rng.standard_t(5, size=(size, features))
        columns = {f"x{j}": X[:, j] for j in range(features)}
        columns["y"] = X @ beta / 4 + rng.normal(size=size)
        columns["label"] = rng.random(size) < 1 / (1 + np.exp(-X @ weights))
        pq.write_table(pa.table(columns), folder / f"part{part:04d}.parquet", row_group_size=size)
    return time.perf_counter() - started


def peak_rss_mb(reset: bool = False) -> tuple[float, float]:
    """(peak, current) RSS of this process in MB, from Linux's /proc; ``reset`` starts a new peak.

    VmHWM belongs to this process alone (ru_maxrss would carry the parent's peak over exec).
    """
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    if reset:
        Path("/proc/self/clear_refs").write_text("5")
    return int(status["VmHWM"].split()[0]) / 1024, int(status["VmRSS"].split()[0]) / 1024


def measure(kind: str, folder: Path, features: int) -> dict[str, object]:
    """One measurement in this process: wall seconds, peak RSS, passes over the files, and what it produced."""
    import pyarrow.parquet as pq

    from accfirst.methods.options import SearchOptions
    from accfirst.scale import ParquetRows, problem_from_parquet
    from accfirst.search.experiments import search, trial_rng

    names = [f"x{j}" for j in range(features)]
    passes = {"count": 0}
    reduce = ParquetRows.reduce

    def counted(self, *args, **kwargs):
        passes["count"] += 1
        return reduce(self, *args, **kwargs)

    ParquetRows.reduce = counted  # the logistic passes (Newton iterations, exact losses)
    _, base = peak_rss_mb(reset=True)
    started = time.perf_counter()
    if kind == "pyarrow":
        rows = sum(pq.read_table(path, columns=[*names, "y"]).num_rows for path in sorted(folder.glob("*.parquet")))
        return {"seconds": time.perf_counter() - started, "peak_mb": peak_rss_mb()[0], "base_mb": base, "rows": rows}
    task = "ridge" if kind == "ridge" else "logistic"
    problem = problem_from_parquet(
        folder,
        "y" if task == "ridge" else "label",
        names,
        task=task,
        lam=LAM,
        feature_bound=FEATURE_BOUND,
        target_bound=TARGET_BOUND,
    )
    figures = {
        "seconds": time.perf_counter() - started,
        "peak_mb": peak_rss_mb()[0],
        "base_mb": base,
        "passes": passes["count"] if task == "logistic" else 1,
        "n": problem.n,
        "theta_norm": float(np.linalg.norm(problem.theta_star)),
    }
    passes["count"] = 0
    started = time.perf_counter()
    run = search(problem, "nr", ALPHA, 0.1, trial_rng(0, "nr", ALPHA, 0), SearchOptions())
    figures["run"] = {
        "seconds": time.perf_counter() - started,
        "passes": passes["count"],
        "stop_index": run.stop_index,
        "eps_total": run.eps_total,
        "excess_risk": run.excess_risk,
        "peak_mb": peak_rss_mb()[0],
    }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--parts", type=int, default=80)
    parser.add_argument("--repeat", type=int, default=3, help="pyarrow and ridge passes, alternated (default: 3)")
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the Parquet files (default: %(default)s)")
    parser.add_argument("--keep", action="store_true", help="keep the Parquet files")
    parser.add_argument("--measure", choices=("pyarrow", "ridge", "logistic"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.out, args.features)))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(args.out).free
    need = args.rows * (args.features + 2) * 8
    if free < 2 * need:
        raise SystemExit(f"needs about {need / 1e9:.1f} GB on disk (twice that free); {free / 1e9:.1f} GB free")
    results: dict[str, list[dict]] = {"pyarrow": [], "ridge": [], "logistic": []}
    try:
        seconds = write(args.out, args.rows, args.features, args.parts)
        size = sum(path.stat().st_size for path in args.out.glob("*.parquet"))
        print(
            f"wrote {args.rows:,} rows × {args.features} features in {args.parts} parts: {size / 1e9:.2f} GB on "
            f"disk, {args.rows * args.features * 8 / 1e9:.2f} GB of float64 features, {seconds:.0f} s"
        )
        # Alternated, so that load from other processes on a shared machine falls on both alike.
        for kind in [*("pyarrow", "ridge") * args.repeat, "logistic"]:
            done = subprocess.run(
                [sys.executable, __file__, "--measure", kind, "--features", str(args.features), "--out", str(args.out)],
                capture_output=True,
                text=True,
                check=True,
            )
            results[kind].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(kind, results[kind][-1], flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(args.out, ignore_errors=True)
    yardstick = min(row["seconds"] for row in results["pyarrow"])
    print(f"\n| step | passes | wall s (best of {args.repeat}; all) | × pyarrow pass | peak RSS MB (after imports) |")
    print("| --- | --- | --- | --- | --- |")
    for kind, label in (
        ("pyarrow", "one pyarrow pass (read_table per file)"),
        ("ridge", "ridge problem"),
        ("logistic", "logistic problem (Newton)"),
    ):
        rows = results[kind]
        best = min(row["seconds"] for row in rows)
        every = ", ".join(f"{row['seconds']:.1f}" for row in rows)
        print(
            f"| {label} | {rows[0].get('passes', 1)} | {best:.1f} ({every}) | {best / yardstick:.2f} | "
            f"{max(row['peak_mb'] for row in rows):.0f} ({rows[0]['base_mb']:.0f}) |"
        )
    for kind in ("ridge", "logistic"):
        run = results[kind][0]["run"]
        print(
            f"| noise reduction on the {kind} problem, α = {ALPHA}: level {run['stop_index']}, ex-post ε = "
            f"{run['eps_total']:.4g} | {run['passes']} | {run['seconds']:.1f} | — | {run['peak_mb']:.0f} |"
        )


if __name__ == "__main__":
    main()
