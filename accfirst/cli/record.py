"""``accfirst run --json``: one run as one JSON object (docs/mathematics.md#what-a-run-reports,
docs/mathematics.md#a-target-in-the-units-people-read, docs/mathematics.md#refusals-that-spend-nothing).

The object's keys:

- ``theta`` (the released model, a list; null when nothing was released) and ``lam`` (its λ, chosen privately for a
  target in R² or accuracy; null when nothing was released);
- ``eps_total`` and its parts ``eps_prep``, ``eps_radius``, ``eps_scale``, ``eps_test``, ``eps_hypothesis``, with
  ``delta`` (a number that is not finite, the ε = ∞ of the paper's exact fallback, is null);
- ``target`` ("r2", "accuracy", "alpha" or "kappa") and ``goal`` (r, a, α or κ); ``met``: the private test certified
  the released model, which then meets the target with probability ≥ 1 − γ; ``released``;
- ``refused``: the target was refused from public numbers before the data were read (nothing spent), and ``reason``:
  why nothing certified was released (null when ``met``);
- ``method``, ``gamma``, ``n`` (training rows), ``prep_mode``, ``seed``;
- the figures that read the data without noise: ``in_sample_r2`` / ``in_sample_accuracy`` (a target in R² or
  accuracy) or ``excess_risk`` (α, κ), and, where a test split exists, ``heldout_r2`` (ridge) or ``heldout_accuracy``
  (logistic). ``evaluation_only`` lists the keys of these: they are for judging the run, not part of its release.
"""

from __future__ import annotations

import json
import math
from typing import Any

from accfirst.datasets.prepared import PreparedData
from accfirst.erm.quality import Accuracy, QualityTarget, VarianceExplained
from accfirst.interpret.bill import BILL_PARTS
from accfirst.methods.pipeline import Target
from accfirst.methods.relative import NoSignal, RelativeTarget
from accfirst.result import RunResult

# The parts of a run's ε, in the order they are paid.
EPSILON_PARTS = tuple(part for part, _ in BILL_PARTS)
# Why an α or κ run released nothing certified.
NO_LEVEL_PASSED = "no level passed the test: nothing released, charged the declared top"
EXACT_FALLBACK = "no level passed the test: the exact θ* was released, not private (ε = ∞)"


def target_fields(target: Target) -> tuple[str, float]:
    """(``target``, ``goal``): what the run aimed at, by name, and its level."""
    if isinstance(target, (VarianceExplained, Accuracy)):
        return target.key, target.goal
    if isinstance(target, RelativeTarget):
        return "kappa", target.kappa
    return "alpha", float(target)


# How the text output names the held-out figures.
HELDOUT_LABELS = {"heldout_r2": "held-out R²", "heldout_accuracy": "held-out accuracy"}


def heldout_quality(data: PreparedData | None, result: RunResult) -> dict[str, float]:
    """``{"heldout_r2": …}`` (ridge) or ``{"heldout_accuracy": …}`` (logistic) of the released model on the test rows,
    or ``{}`` without a released model or a test split (evaluation only: it reads the test rows)."""
    if data is None or result.theta is None or not len(data.y_test):
        return {}
    key = "r2" if data.task == "ridge" else "accuracy"
    return {f"heldout_{key}": data.test_quality(result.theta)[key]}


def run_record(result: RunResult, target: Target, heldout: dict[str, float], seed: str) -> dict[str, Any]:
    """The JSON object of a run (the module's keys)."""
    name, goal = target_fields(target)
    met = result.theta is not None and not result.fallback and not isinstance(result, NoSignal)
    exact: dict[str, float]
    if isinstance(target, (VarianceExplained, Accuracy)):
        exact = {f"in_sample_{name}": result.quality}
    else:
        exact = {"excess_risk": result.excess_risk}
    exact |= heldout
    return {
        "theta": None if result.theta is None else [float(value) for value in result.theta],
        "lam": result.lam if result.theta is not None else None,
        "eps_total": result.eps_total,
        **{part: getattr(result, part) for part in EPSILON_PARTS},
        "delta": result.delta,
        "target": name,
        "goal": goal,
        "met": met,
        "released": result.theta is not None,
        "refused": result.refused,
        "reason": None if met else _reason(result),
        "method": result.method,
        "gamma": result.gamma,
        "n": result.n,
        "prep_mode": result.prep_mode,
        "seed": seed,
        **exact,
        "evaluation_only": sorted(exact),
    }


def refusal_record(target: QualityTarget, n: int | None, gamma: float, reason: str) -> dict[str, Any]:
    """The JSON object of a target refused before the rows were prepared: nothing released, nothing spent."""
    return {
        "theta": None,
        "lam": None,
        "eps_total": 0.0,
        **dict.fromkeys(EPSILON_PARTS, 0.0),
        "delta": 0.0,
        "target": target.key,
        "goal": target.goal,
        "met": False,
        "released": False,
        "refused": True,
        "reason": reason,
        "gamma": gamma,
        "n": n,
        "evaluation_only": [],
    }


def _reason(result: RunResult) -> str:
    if isinstance(result, NoSignal):
        return result.message
    if result.stopped:
        return result.stopped
    return EXACT_FALLBACK if result.theta is not None else NO_LEVEL_PASSED


def print_json(record: dict[str, Any]) -> None:
    """``record`` on one line of strict JSON (a number that is not finite becomes null)."""
    clean = {
        key: None if isinstance(value, float) and not math.isfinite(value) else value for key, value in record.items()
    }
    print(json.dumps(clean, ensure_ascii=False, allow_nan=False))
