"""Built-in datasets: shapes, docs/mathematics.md#setting-and-notation bounds, determinism, speed, and a
non-trivial search.

The real tables are prepared privately (docs/mathematics.md#preparing-the-data-privately): each load without a noise
seed is a fresh release; a whole number repeats one (not a private release), a ``SecretSeed`` too (private).

"Non-trivial" is checked at the paper's settings (λ = 0.005, α = 0.05): predicting 0 must
miss the target by a wide margin, ``L(0) − L(θ*) ≥ 2α`` on both synthetic sets, where θ*
is the exact minimiser of the loss in docs/mathematics.md#the-two-learning-problems (ridge by the normal equations,
logistic by Newton).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from accfirst.datasets import BUILTIN_DATASETS, DatasetInfo, load_builtin
from accfirst.datasets.builtin import _RECIPES, _load
from accfirst.datasets.prepare.noise import SecretSeed
from accfirst.errors import DataError
from tests.datasets.dataset_checks import assert_spec

LAMBDA = 0.005
ALPHA = 0.05
NAMES = list(BUILTIN_DATASETS)


def _ridge_theta_star(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    n, p = X.shape
    return np.linalg.solve(X.T @ X / n + LAMBDA * np.eye(p), X.T @ y / n)


def _logistic_theta_star(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    n, p = X.shape
    theta = np.zeros(p)
    for _ in range(50):
        weight = 0.5 * (1 - np.tanh(y * (X @ theta) / 2))
        gradient = -(X.T @ (y * weight)) / n + LAMBDA * theta
        if np.linalg.norm(gradient) < 1e-12:
            break
        hessian = (X.T * (weight * (1 - weight))) @ X / n + LAMBDA * np.eye(p)
        theta -= np.linalg.solve(hessian, gradient)
    return theta


def _loss(task: str, X: np.ndarray, y: np.ndarray, theta: np.ndarray) -> float:
    margin = X @ theta
    data = 0.5 * np.mean((y - margin) ** 2) if task == "ridge" else np.mean(np.logaddexp(0, -y * margin))
    return float(data + LAMBDA / 2 * theta @ theta)


def test_registry_lists_the_four_sets_with_the_default_first() -> None:
    assert NAMES == ["synthetic-buzz", "synthetic-intrusion", "diabetes", "breast-cancer"]
    expected = {
        "synthetic-buzz": ("ridge", 100_000, 77),
        "synthetic-intrusion": ("logistic", 100_000, 38),
        "diabetes": ("ridge", 442, 10),
        "breast-cancer": ("logistic", 569, 30),
    }
    for name, info in BUILTIN_DATASETS.items():
        assert isinstance(info, DatasetInfo) and info.name == name
        assert (info.task, info.n, info.p) == expected[name]
        sentences = len(re.findall(r"[.!?](\s|$)", info.description))
        assert 2 <= sentences <= 4, info.description
        assert info.title and info.provenance


@pytest.mark.parametrize("name", NAMES)
def test_builtin_satisfies_spec_and_matches_its_info(name: str) -> None:
    data = load_builtin(name)
    info = BUILTIN_DATASETS[name]
    assert_spec(data)
    assert data.info is info and data.task == info.task
    assert data.p == info.p and data.n + len(data.y_test) == info.n
    assert len(data.y_test) == round(0.2 * info.n)
    assert data.report.rows_dropped_missing == 0 and data.report.dropped_columns == ()
    if name.startswith("synthetic"):
        # Generated from public parameters: the paper's scaling by the largest row, for free.
        assert data.prep_epsilon == data.prep_delta == 0 and data.preparation.mode == "public"
        assert "generated from public parameters: preparation is free" in data.report.steps[-1]
        assert np.abs(data.X_train).sum(axis=1).max() == pytest.approx(1.0, abs=1e-12)
        if info.task == "ridge":
            assert np.abs(data.y_train).max() == 1.0
    else:
        # A real table: prepared privately like an upload, its noise from the operating system (nothing to name).
        assert data.preparation.mode == "private" and 0 < data.prep_epsilon < np.inf and data.prep_delta == 0
        assert data.preparation.noise_seed is None and "repeatable" not in data.report.steps[-1]


@pytest.mark.parametrize("name", ["diabetes", "breast-cancer"])
def test_a_real_table_is_a_fresh_release_unless_a_seed_repeats_it(name: str) -> None:
    first, second = load_builtin(name), load_builtin(name)
    assert first is not second and not np.array_equal(first.X_train, second.X_train)  # new noise each time
    assert first.prep_epsilon == second.prep_epsilon  # the same budget, spent again
    repeatable = load_builtin(name, noise_seed=3)
    np.testing.assert_array_equal(repeatable.X_train, _load.__wrapped__(name, 0.2, 0, 3).X_train)
    assert "repeatable run (noise seed 3): not a private release" in repeatable.report.steps[-1]
    secret = SecretSeed.draw()
    private = load_builtin(name, noise_seed=secret)
    np.testing.assert_array_equal(private.X_train, _load.__wrapped__(name, 0.2, 0, secret).X_train)
    assert private.preparation.noise_seed is None and "repeatable" not in private.report.steps[-1]
    assert str(secret.entropy) not in repr(secret) + repr(private.preparation) + " ".join(private.report.steps)


@pytest.mark.parametrize("name", NAMES)
def test_cached_arrays_cannot_be_changed(name: str) -> None:
    data = load_builtin(name, noise_seed=0)
    assert load_builtin(name, noise_seed=0) is data
    with pytest.raises(ValueError, match="read-only"):
        data.X_train[0, 0] = 5.0
    with pytest.raises(ValueError, match="read-only"):
        data.y_test[0] = 5.0


@pytest.mark.parametrize("name", ["synthetic-buzz", "synthetic-intrusion"])
def test_synthetic_generation_is_deterministic(name: str) -> None:
    # Its speed is a benchmark figure (benchmarks/bench_datasets.py), not a timed test. The set the other tests share
    # (generated once per test process) against a generation of its own: one generation fewer than two fresh ones.
    first, second = load_builtin(name), _load.__wrapped__(name, 0.2, 0, None)
    assert first is not second
    for a, b in [(first.X_train, second.X_train), (first.y_train, second.y_train), (first.X_test, second.X_test)]:
        np.testing.assert_array_equal(a, b)
    assert first.report == second.report


def test_split_seed_changes_the_split_but_not_the_data() -> None:
    a = load_builtin("diabetes", seed=0, noise_seed=0)
    b = load_builtin("diabetes", seed=1, noise_seed=0)
    assert not np.array_equal(a.y_test_original, b.y_test_original)
    # Both test parts are 88 of the same 442 targets, in their own units.
    targets = set(_RECIPES["diabetes"].table()["progression"])
    assert len(a.y_test) == len(b.y_test) == 88
    assert set(a.y_test_original) <= targets and set(b.y_test_original) <= targets


def test_test_size_is_honoured() -> None:
    data = load_builtin("breast-cancer", test_size=0.3)
    assert data.report.n_test == pytest.approx(0.3 * 569, abs=1)


def test_unknown_name_lists_the_valid_names() -> None:
    with pytest.raises(DataError, match="unknown built-in dataset 'twitter'; choose one of: 'synthetic-buzz', "):
        load_builtin("twitter")


@pytest.mark.parametrize(
    ("name", "quality_floor"),
    [("synthetic-buzz", {"r2": 0.5}), ("synthetic-intrusion", {"accuracy": 0.85, "auc": 0.95})],
)
def test_synthetic_sets_make_the_search_non_trivial(name: str, quality_floor: dict[str, float]) -> None:
    data = load_builtin(name)
    X, y = data.X_train, data.y_train
    theta = _ridge_theta_star(X, y) if data.task == "ridge" else _logistic_theta_star(X, y)
    gap = _loss(data.task, X, y, np.zeros(data.p)) - _loss(data.task, X, y, theta)
    assert gap >= 2 * ALPHA
    quality = data.test_quality(theta)
    for metric, floor in quality_floor.items():
        assert quality[metric] >= floor
    if data.task == "logistic":
        assert quality["accuracy"] <= 0.97
