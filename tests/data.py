"""Small synthetic datasets that satisfy SPEC §1, built from fixed seeds."""

from __future__ import annotations

import numpy as np


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
