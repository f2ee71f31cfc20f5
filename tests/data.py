"""Small synthetic datasets that satisfy SPEC §1, built from fixed seeds; and a Parquet memory bomb."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def make_rows(rng: np.random.Generator, n: int, p: int) -> np.ndarray:
    """n rows with ‖x‖₁ ≤ 1: signed heavy-ish features scaled by the largest ℓ1 norm."""
    X = rng.standard_t(4, size=(n, p))
    return X / np.abs(X).sum(axis=1).max()


def make_ridge_data(seed: int, n: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = make_rows(rng, n, p)
    y = X @ rng.normal(scale=8.0, size=p) + rng.normal(scale=0.2, size=n)
    return X, y / np.abs(y).max()


def make_logistic_data(seed: int, n: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = make_rows(rng, n, p)
    margin = X @ rng.normal(scale=20.0, size=p)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-margin)), 1.0, -1.0)
    return X, y


def parquet_bomb(rows: int = 500_000, columns: int = 300) -> bytes:
    """Zeros, zstd-compressed: under 1 MB on disk, ``rows × columns × 8`` bytes as numbers (1.2 GB by default).

    Written in ten row groups, so that building it takes one tenth of the table in memory (~2 s by default).
    """
    part = pa.table({f"x{i}": np.zeros(rows // 10) for i in range(columns)})
    buffer = io.BytesIO()
    with pq.ParquetWriter(
        buffer, part.schema, compression="zstd", use_dictionary=False, write_statistics=False
    ) as writer:
        for _ in range(10):
            writer.write_table(part)
    return buffer.getvalue()
