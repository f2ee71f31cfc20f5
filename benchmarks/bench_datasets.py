"""Benchmark of the datasets layer. Prints figures; asserts nothing.

1. Built-in datasets: seconds to generate and prepare each one without the cache.
2. Their properties at the paper's settings (λ = 0.005, α = 0.05, 80/20 split, seed 0):
   L(0), L(0) − L(θ*) in units of α, ‖θ*‖₂ and the test quality of θ* (docs/mathematics.md#the-two-learning-problems
   losses, θ* exact: ridge by the normal equations, logistic by Newton's method).
3. Upload: reading and preparing a 1,000,000 × 50 numeric CSV (49 features and a ridge
   target) with ``read_upload`` + ``from_frame``, in a fresh subprocess that receives the
   bytes on stdin (nothing touches the disk). Reports seconds and the subprocess's peak
   resident memory (VmHWM, reset once the bytes have arrived where Linux allows it), which
   includes the interpreter, the imports and the CSV bytes it holds.

Usage: python benchmarks/bench_datasets.py [--rows 1000000] [--columns 50]
"""

from __future__ import annotations

import argparse
import io
import resource
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv

from accfirst.datasets import BUILTIN_DATASETS, UploadLimits, from_frame, read_upload
from accfirst.datasets.builtin import _load

LAM, ALPHA = 0.005, 0.05


def theta_star(task: str, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    n, p = X.shape
    if task == "ridge":
        return np.linalg.solve(X.T @ X / n + LAM * np.eye(p), X.T @ y / n)
    theta = np.zeros(p)
    for _ in range(100):
        weight = 0.5 * (1 - np.tanh(y * (X @ theta) / 2))
        gradient = -(X.T @ (y * weight)) / n + LAM * theta
        if np.linalg.norm(gradient) <= 1e-10:
            break
        theta -= np.linalg.solve((X.T * (weight * (1 - weight))) @ X / n + LAM * np.eye(p), gradient)
    return theta


def loss(task: str, X: np.ndarray, y: np.ndarray, theta: np.ndarray) -> float:
    margin = X @ theta
    data = 0.5 * np.mean((y - margin) ** 2) if task == "ridge" else np.mean(np.logaddexp(0, -y * margin))
    return float(data + LAM / 2 * theta @ theta)


def builtin_figures() -> None:
    print(
        f"{'dataset':20} {'cold s':>7} {'n_train':>8} {'p':>4} {'L(0)':>7} {'L(0)-L(θ*)':>11} {'/α':>5} "
        f"{'‖θ*‖':>6}  test quality of θ*"
    )
    for name, info in BUILTIN_DATASETS.items():
        started = time.perf_counter()
        data = _load.__wrapped__(name, 0.2, 0, 0)  # a real table with noise seed 0: the docstring's figures
        seconds = time.perf_counter() - started
        theta = theta_star(info.task, data.X_train, data.y_train)
        at_zero = loss(info.task, data.X_train, data.y_train, np.zeros(data.p))
        gap = at_zero - loss(info.task, data.X_train, data.y_train, theta)
        quality = ", ".join(f"{metric} {value:.3f}" for metric, value in data.test_quality(theta).items())
        print(
            f"{name:20} {seconds:7.3f} {data.n:8,} {data.p:4} {at_zero:7.4f} {gap:11.4f} {gap / ALPHA:5.1f} "
            f"{np.linalg.norm(theta):6.2f}  {quality}"
        )


def numeric_csv(rows: int, columns: int) -> bytes:
    rng = np.random.default_rng(0)
    features = {f"x{j}": np.round(rng.lognormal(1.0, 1.0, rows), 4) for j in range(columns - 1)}
    features["y"] = np.round(sum(features.values()) / columns + rng.normal(0, 1, rows), 4)
    buffer = io.BytesIO()
    pa_csv.write_csv(pa.table(features), buffer)
    return buffer.getvalue()


def reset_peak_memory() -> bool:
    """Reset this process's peak-RSS counter (Linux ≥ 4.0), so the peak covers only what follows."""
    try:
        with open("/proc/self/clear_refs", "w") as control:
            control.write("5")
    except OSError:
        return False
    return True


def peak_megabytes() -> float:
    """Peak resident memory of this process: VmHWM where /proc has it, else ``ru_maxrss``.

    ``ru_maxrss`` also counts the parent's memory at fork time, so VmHWM is preferred.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child() -> None:
    """Read CSV bytes from stdin, prepare them, print seconds and peak memory."""
    data = sys.stdin.buffer.read()
    reset = reset_peak_memory()
    baseline = peak_megabytes()
    limits = UploadLimits(max_bytes=2 * 1024**3)
    started = time.perf_counter()
    frame = read_upload(data, "bench.csv", limits=limits)
    read = time.perf_counter() - started
    prepared = from_frame(frame, target="y", task="ridge", limits=limits)
    total = time.perf_counter() - started
    peak = peak_megabytes()
    print(
        f"read_upload {read:.2f} s, + from_frame {total - read:.2f} s = {total:.2f} s; "
        f"X_train {prepared.X_train.shape}, X_test {prepared.X_test.shape}"
    )
    since = "since the bytes arrived" if reset else "over the whole subprocess, including reading the pipe"
    print(f"peak RSS {peak:,.0f} MB {since} (at the start: {baseline:,.0f} MB = interpreter, imports, CSV bytes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--columns", type=int, default=50)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child()
        return

    builtin_figures()
    data = numeric_csv(args.rows, args.columns)
    print(f"\nupload: {args.rows:,} × {args.columns} numeric CSV, {len(data) / 1024**2:,.0f} MB")
    result = subprocess.run([sys.executable, __file__, "--child"], input=data, capture_output=True, check=True)
    print(result.stdout.decode().rstrip())


if __name__ == "__main__":
    main()
