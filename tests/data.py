"""Small synthetic datasets that satisfy docs/mathematics.md#setting-and-notation, built from fixed seeds; and a Parquet
memory bomb."""

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


REGION_EFFECT = {"north": 80.0, "south": -60.0, "east": 20.0, "west": -30.0, "centre": 120.0}
PLAN_EFFECT = {"basic": -40.0, "plus": 0.0, "pro": 90.0}


def mixed_table(n: int, seed: int, gap_share: float = 0.05):
    """A customer table as people upload them: numbers, text, a heavy tail, a flag and gaps.

    Generated from public parameters (no real person in it). Numbers: age (uniform 18–80), income
    (log-normal, σ = 1: heavy-tailed), visits (Poisson 3), score (normal), tenure (exponential),
    member (a 0/1 flag, 30% ones); text: region (5 levels, 10–30% each), plan (3 levels), colour
    (30 levels, geometric: most are rare; no effect). ``spend`` (ridge) depends on all but colour,
    plus noise; ``churn`` (yes/no, logistic) on age, visits, plan and member. Every column but the
    targets has ``gap_share`` of its values missing, and 2% of the ``spend`` values are missing.
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    region = rng.choice(list(REGION_EFFECT), n, p=[0.3, 0.25, 0.2, 0.15, 0.1])
    plan = rng.choice(list(PLAN_EFFECT), n, p=[0.5, 0.3, 0.2])
    age = rng.uniform(18, 80, n).round()
    income = np.round(rng.lognormal(10.3, 1.0, n), -2)
    visits = rng.poisson(3, n).astype(float)
    score = rng.normal(50, 10, n)
    tenure = rng.exponential(4.0, n).round(1)
    member = (rng.random(n) < 0.3).astype(float)
    colour = np.array([f"c{i}" for i in range(30)])[np.minimum(rng.geometric(0.25, n) - 1, 29)]
    effects = pd.Series(region).map(REGION_EFFECT).to_numpy() + pd.Series(plan).map(PLAN_EFFECT).to_numpy()
    spend = 150 + effects + 1.5 * age + 0.001 * income + 8 * visits + 0.5 * score + 3 * tenure + 40 * member
    churn_margin = 0.04 * (45 - age) - 0.4 * (visits - 3) + np.where(plan == "basic", 0.8, -0.5) - 1.0 * member
    frame = pd.DataFrame(
        {
            "age": age,
            "income": income,
            "visits": visits,
            "score": score.round(2),
            "tenure": tenure,
            "member": member,
            "region": region,
            "plan": plan,
            "colour": colour,
            "spend": (spend + rng.normal(0, 30, n)).round(2),
            "churn": np.where(churn_margin + rng.logistic(size=n) > 0, "yes", "no"),
        }
    )
    for column in ("age", "income", "visits", "score", "tenure", "member", "region", "plan", "colour"):
        frame.loc[rng.random(n) < gap_share, column] = np.nan
    frame.loc[rng.random(n) < 0.02, "spend"] = np.nan
    return frame


def customer_upload(rows: int = 5000, seed: int = 7):
    """A customer table as an analyst uploads it: an id column, numbers and text with gaps, a numeric target.

    Generated from public parameters (no real person in it). ``customer_id`` is a running number; ``age``,
    ``tenure_months``, ``income`` (log-normal), ``visits`` (Poisson), ``satisfaction`` (1–10) are numbers;
    ``region`` (5 levels), ``plan`` (3) and ``signup_channel`` (4, no effect) are text. ``annual_spend`` depends on
    tenure, income, visits, plan, region and satisfaction plus noise, so that least squares on the same columns
    reaches a held-out R² of about 0.55. Income, satisfaction, age and region have gaps (8%, 15%, 3%, 2%).
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    age = rng.normal(42, 12, rows).clip(18, 90).round()
    tenure = rng.gamma(2.0, 18.0, rows).round()
    income = np.exp(rng.normal(10.8, 0.5, rows))
    visits = rng.poisson(6, rows) + rng.poisson(0.4 * (tenure / 12), rows)
    region = rng.choice(list(CUSTOMER_REGION_EFFECT), rows, p=[0.3, 0.25, 0.2, 0.15, 0.1])
    plan = rng.choice(list(CUSTOMER_PLAN_EFFECT), rows, p=[0.55, 0.3, 0.15])
    channel = rng.choice(["web", "store", "phone", "partner"], rows, p=[0.5, 0.25, 0.15, 0.1])
    satisfaction = rng.integers(1, 11, rows).astype(float)
    effects = pd.Series(plan).map(CUSTOMER_PLAN_EFFECT).to_numpy() + pd.Series(region).map(CUSTOMER_REGION_EFFECT)
    spend = 300 + 9 * tenure + 0.004 * income + 35 * visits + effects.to_numpy() + 20 * satisfaction
    frame = pd.DataFrame(
        {
            "customer_id": np.arange(100_001, 100_001 + rows),
            "age": age,
            "tenure_months": tenure,
            "income": income.round(-1),
            "visits": visits.astype(float),
            "region": region,
            "plan": plan,
            "signup_channel": channel,
            "satisfaction": satisfaction,
            "annual_spend": (spend + rng.normal(0, 340, rows)).round(2),
        }
    )
    for column, share in (("income", 0.08), ("satisfaction", 0.15), ("age", 0.03), ("region", 0.02)):
        frame.loc[rng.random(rows) < share, column] = np.nan
    return frame


CUSTOMER_PLAN_EFFECT = {"basic": 0.0, "plus": 250.0, "premium": 700.0}
CUSTOMER_REGION_EFFECT = {"north": 0.0, "south": -80.0, "east": 60.0, "west": 120.0, "central": -40.0}
