"""The built-in datasets: offline, deterministic, prepared in well under a second.

Two synthetic sets shaped like the paper's experiments (appendix B.1) and two small
real sets shipped with scikit-learn. Every set goes through ``from_frame``, so its
``PrepReport`` lists each step. The data are fixed (the generators use fixed seeds);
``seed`` only chooses the train/test split.

The synthetic sets are generated from public parameters: reading them reveals nothing about
anyone, so their preparation is free (``prep_epsilon`` 0) and stays the paper's (log(1 + x),
division by the largest row norm), with the numbers below. The real tables go through the
private preparation like an upload (docs/mathematics.md#preparing-the-data-privately): each ``load_builtin`` of one is a
fresh release, its noise drawn from the operating system, unless a ``noise_seed`` is given — a whole number for a
repeatable run (which its report says is not a private release), or a ``SecretSeed`` that a program keeps to itself so
that its processes prepare the same arrays (the app draws one per server). Their ``prep_epsilon`` is what preparing such
a table costs: at a few hundred rows, 10.6 (diabetes) and 22 (breast cancer), for statistics as good as a large table's
at 0.1 (the test a run pays scales the same way). They state no table budget (``budget=None``): a share of a budget of a
few ε would leave their few hundred rows statistics that miss, and they exist to show what small real tables cost. The evaluation-only preparation of them reads the data
and gave θ* an R² of 0.45 and an accuracy of 0.95.

Properties at the paper's settings (λ = 0.005, α = 0.05, default 80/20 split, split
seed 0), as printed by ``benchmarks/bench_datasets.py``. ``L`` is the training
loss, ``θ*`` its exact minimiser; quality is on the test part, R² and MSE on the prepared
scale, RMSE in the target's own units (buzz counts; disease progression points):

=================== ======= === ====== ============== ===== ==================================
dataset             n_train p   L(0)   L(0) − L(θ*)   ‖θ*‖  test quality of θ*
=================== ======= === ====== ============== ===== ==================================
synthetic-buzz      80,000  77  0.1765 0.1414 (2.8α)  3.32  R² 0.60, MSE 0.015, RMSE 3,358
synthetic-intrusion 80,000  38  0.6931 0.1481 (3.0α)  5.30  accuracy 0.90, AUC 0.97
diabetes            354     10  0.0936 0.0238 (0.5α)  2.04  R² 0.38, MSE 0.118, RMSE 60.9
breast-cancer       455     30  0.6931 0.0472 (0.9α)  4.04  accuracy 0.93, AUC 0.98
=================== ======= === ====== ============== ===== ==================================

On both synthetic sets the zero model misses α = 0.05 by a wide margin, so the private
search has real work to do, and ``‖θ*‖₂`` sits well inside the bounds ``M`` of
docs/mathematics.md#the-two-learning-problems (14.1 for ridge, 16.7 for logistic). On the paper's grid (T = 1000 levels
from 1/n to 4E, theorem calibration, α = 0.05) the median noise-reduction stop over 30 trials is level 613 (ε_t ≈ 0.20)
on synthetic-buzz and level 616 (ε_t ≈ 0.086) on synthetic-intrusion: some 600 levels are tested and rejected first.
With the 80/20 split the private algorithms see 80,000 rows of a synthetic set, not the paper's 100,000: pass a smaller
``test_size`` to come closer.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from accfirst.datasets import synthetic
from accfirst.datasets.prepare.noise import NoiseSeed, validate_noise_seed
from accfirst.datasets.prepared import EVALUATION_MODE, PUBLIC, PUBLIC_MODE, DatasetInfo, Preparation, PreparedData
from accfirst.datasets.preprocess import from_frame
from accfirst.errors import DataError

SYNTHETIC_ROWS = 100_000
_GENERATION_SEEDS = {"synthetic-buzz": 2017, "synthetic-intrusion": 1999}


@dataclass(frozen=True)
class _Recipe:
    """How to build a built-in set: its raw table and the ``from_frame`` options that prepare it."""

    info: DatasetInfo
    table: Callable[[], pd.DataFrame]
    options: dict[str, Any] = field(default_factory=dict)  # checked by from_frame

    @property
    def public(self) -> bool:
        """Generated from public parameters (prepared for free), rather than a real table."""
        return self.info.public


def _buzz_table() -> pd.DataFrame:
    return synthetic.synthetic_buzz(SYNTHETIC_ROWS, np.random.default_rng(_GENERATION_SEEDS["synthetic-buzz"]))


def _intrusion_table() -> pd.DataFrame:
    rng = np.random.default_rng(_GENERATION_SEEDS["synthetic-intrusion"])
    return synthetic.synthetic_intrusion(SYNTHETIC_ROWS, rng)


# The paper's preparation (appendix B.1): log(1 + x) where a set says, then division by the largest row norm,
# without centring or standardising; it reads the data, which costs nothing on a set made from public parameters.
_PAPER_PREPARATION = {"center": False, "standardize": False, "preparation": EVALUATION_MODE}


def _synthetic(
    *,
    name: str,
    task: str,
    title: str,
    description: str,
    provenance: str,
    columns: Sequence[str],
    table: Callable[[], pd.DataFrame],
    target_range: tuple[float, float] = (-1.0, 1.0),
    **options: Any,
) -> _Recipe:
    """A synthetic set: ``SYNTHETIC_ROWS`` rows of ``columns`` generated from public parameters, prepared as the paper's."""
    info = DatasetInfo(name, task, title, description, provenance, SYNTHETIC_ROWS, len(columns), True, target_range)
    return _Recipe(info, table, {"task": task, **options, **_PAPER_PREPARATION})


# scikit-learn is imported where its data are loaded: importing it costs about 0.3 s,
# which the app's default (synthetic) view need not pay on a cold start.


def _diabetes_table() -> pd.DataFrame:
    from sklearn.datasets import load_diabetes

    frame: pd.DataFrame = load_diabetes(as_frame=True).frame
    return frame.rename(columns={"target": "progression"})


def _breast_cancer_table() -> pd.DataFrame:
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer(as_frame=True)
    frame: pd.DataFrame = bunch.data.copy()
    frame["diagnosis"] = np.asarray(bunch.target_names)[bunch.target.to_numpy()]
    return frame


_RECIPES = {
    "synthetic-buzz": _synthetic(
        name="synthetic-buzz",
        task="ridge",
        title="Synthetic social-media buzz (ridge regression)",
        description=(
            "100,000 simulated posts with 77 activity measurements (11 indicators over 7 time windows), "
            "shaped like the Twitter buzz data of the paper's ridge experiment. Counts are heavy-tailed "
            "and enter as log(1 + x); the target is the post's later buzz, log(1 + y), driven by a few "
            "recent counts plus noise."
        ),
        provenance=(
            "Synthetic, generated by accfirst.datasets.synthetic.synthetic_buzz with seed 2017; no real "
            "data involved. Modelled on the Buzz in Social Media data (UCI) used by Ligett et al. (2017), "
            "appendix B.1. Preprocessing as in the paper: log(1 + x) on all 77 columns, log(1 + y) on the "
            "target, divide by the largest row ℓ1 norm and the largest |y| (not private)."
        ),
        columns=synthetic.BUZZ_COLUMNS,
        table=_buzz_table,
        target=synthetic.BUZZ_TARGET,
        log1p_columns=synthetic.BUZZ_COLUMNS,
        log1p_target=True,
        target_range=(0.0, 1.0),
    ),
    "synthetic-intrusion": _synthetic(
        name="synthetic-intrusion",
        task="logistic",
        title="Synthetic network intrusions (logistic regression)",
        description=(
            "100,000 simulated network connections with 38 features, shaped like the KDD-99 data of the "
            "paper's logistic experiment: heavy-tailed durations and byte counts, binary flags, "
            "connection counts and error rates. The label is attack (+1) or normal (−1); some attacks "
            "look like normal sessions, so the classes overlap."
        ),
        provenance=(
            "Synthetic, generated by accfirst.datasets.synthetic.synthetic_intrusion with seed 1999; no "
            "real data involved. Modelled on the KDD Cup 1999 data used by Ligett et al. (2017), appendix "
            "B.1. Preprocessing as in the paper: log(1 + x) on duration, src_bytes and dst_bytes, divide "
            "by the largest row ℓ1 norm (not private)."
        ),
        columns=synthetic.INTRUSION_COLUMNS,
        table=_intrusion_table,
        target=synthetic.INTRUSION_TARGET,
        positive_class=synthetic.INTRUSION_POSITIVE,
        log1p_columns=synthetic.INTRUSION_HEAVY,
    ),
    "diabetes": _Recipe(
        DatasetInfo(
            name="diabetes",
            task="ridge",
            title="Diabetes progression (ridge regression, real, n = 442)",
            description=(
                "442 diabetes patients: age, sex, body-mass index, blood pressure and six blood serum "
                "measurements; the target is disease progression one year later. Real and small: with so "
                "few rows, the privacy cost of any accuracy target is large."
            ),
            provenance=(
                "scikit-learn's load_diabetes (Efron, Hastie, Johnstone & Tibshirani, 'Least Angle "
                "Regression', Annals of Statistics 2004), shipped with scikit-learn. Features as shipped "
                "(centred and scaled by scikit-learn over all 442 rows). Preparation: private, like an upload "
                "(ranges, means and scales released by charged mechanisms, with noise nobody else knows)."
            ),
            n=442,
            p=10,
        ),
        _diabetes_table,
        {"target": "progression", "task": "ridge", "budget": None},
    ),
    "breast-cancer": _Recipe(
        DatasetInfo(
            name="breast-cancer",
            task="logistic",
            title="Breast cancer diagnosis (logistic regression, real, n = 569)",
            description=(
                "569 breast tumour biopsies described by 30 measurements of the cell nuclei; the label is "
                "malignant (+1) or benign (−1). Real and small: with so few rows, the privacy cost of any "
                "accuracy target is large."
            ),
            provenance=(
                "scikit-learn's load_breast_cancer (Breast Cancer Wisconsin (Diagnostic), UCI Machine "
                "Learning Repository; Street, Wolberg & Mangasarian 1993), shipped with scikit-learn. "
                "Preparation: private, like an upload (ranges, means and scales released by charged "
                "mechanisms, with noise nobody else knows)."
            ),
            n=569,
            p=30,
        ),
        _breast_cancer_table,
        {
            "target": "diagnosis",
            "task": "logistic",
            "positive_class": "malignant",
            "budget": None,
        },
    ),
}

BUILTIN_DATASETS: dict[str, DatasetInfo] = {name: recipe.info for name, recipe in _RECIPES.items()}


def load_builtin(name: str, *, test_size: float = 0.2, seed: int = 0, noise_seed: NoiseSeed = None) -> PreparedData:
    """A built-in dataset, prepared and split into training and test parts
    (docs/data-preparation.md#scaling-into-the-unit-ball, docs/mathematics.md#preparing-the-data-privately).

    The data themselves are fixed; ``seed`` chooses the split. Synthetic sets are prepared
    for free (public parameters: no noise, ``noise_seed`` plays no part) and cached per
    ``(name, test_size, seed)``. Real tables are prepared privately, like an upload: without a
    ``noise_seed`` every call is a fresh release (new noise from the operating system, and
    ``prep_epsilon`` spent again); a whole number makes a repeatable run (the report says it is
    not a private release); a ``SecretSeed`` repeats one private release (cached like a seed).
    The arrays are read-only.

    Parameters
    ----------
    name : a key of ``BUILTIN_DATASETS``.
    test_size : share of rows held out for the quality figures (default 0.2).
    seed : seed of the train/test split (default 0).
    noise_seed : the preparation's noise (real tables): ``None`` (operating-system entropy), a
        whole number ≥ 0 (repeatable, not private) or a ``SecretSeed``.
    """
    if name not in _RECIPES:
        choices = ", ".join(f"'{key}'" for key in _RECIPES)
        raise DataError(f"unknown built-in dataset {name!r}; choose one of: {choices}")
    noise_seed = validate_noise_seed(noise_seed)
    if _RECIPES[name].public:
        return _load(name, test_size, seed, None)
    if noise_seed is None:
        return _prepare(name, test_size, seed, None)
    return _load(name, test_size, seed, noise_seed)


@functools.lru_cache(maxsize=8)
def _load(name: str, test_size: float, seed: int, noise_seed: NoiseSeed) -> PreparedData:
    return _prepare(name, test_size, seed, noise_seed)


def _prepare(name: str, test_size: float, seed: int, noise_seed: NoiseSeed) -> PreparedData:
    recipe = _RECIPES[name]
    options = recipe.options if recipe.public else {**recipe.options, "noise_seed": noise_seed}
    data = from_frame(recipe.table(), test_size=test_size, seed=seed, info=recipe.info, **options)
    return _public(data) if recipe.public else data


def _public(data: PreparedData) -> PreparedData:
    """Data generated from public parameters: the same steps, each free (``prep_epsilon`` 0)."""
    preparation = Preparation(PUBLIC_MODE, tuple(replace(step, kind=PUBLIC) for step in data.preparation.steps))
    report = replace(data.report, steps=(*data.report.steps[:-1], preparation.summary), private_scaling=True)
    return replace(data, report=report, preparation=preparation)
