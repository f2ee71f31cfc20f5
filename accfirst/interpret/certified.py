"""Runs toward a target in R² or accuracy summarised, and what they say in words
(docs/mathematics.md#a-target-in-the-units-people-read, docs/mathematics.md#choosing-λ-under-the-guarantee,
docs/mathematics.md#refusals-that-spend-nothing).

Such a run certifies its model's in-sample R² or accuracy, chooses λ under its test and, when nothing can be
certified, releases nothing and says why (``stopped``); when that was known from public numbers before the data were
read, it spent nothing (``refused``). Its in-sample quality and any held-out figure read the data exactly: evaluation
only.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from accfirst.erm.quality import Accuracy, QualityTarget, VarianceExplained
from accfirst.interpret.epsilon import exp_epsilon, format_epsilon, median_with_inf
from accfirst.methods.registry import method_label

#: The unit of each target's key, as a results frame names it.
UNITS = {VarianceExplained.key: VarianceExplained.unit, Accuracy.key: Accuracy.unit}
#: The parts of a certified run's ε, in the order they are paid, as a stakeholder reads them.
CERTIFIED_PARTS = (
    ("eps_prep", "preparing the data"),
    ("eps_scale", "the targets' variance"),
    ("eps_test", "the private check"),
    ("eps_hypothesis", "the model"),
)
#: A results frame's column of each run's held-out R² or accuracy, where the caller scored the released models.
HELDOUT = "heldout"

CERTIFIED_COLUMNS = (
    "method",
    "label",
    "target",
    "unit",
    "goal",
    "trials",
    "median_eps",
    "median_exp_eps",
    *(f"median_{part}" for part, _ in CERTIFIED_PARTS),
    "released",
    "refused",
    "met",
    "median_lam",
    "lams",
    "median_quality",
    "median_heldout",
    "stopped",
    "stopped_runs",
    "eps_prep",
    "prep_mode",
    "delta",
    "delta_prep",
)


def target_text(target: QualityTarget | pd.Series | dict[str, Any]) -> str:
    """The target as people read it: "R² ≥ 0.8", "accuracy ≥ 0.9"."""
    if isinstance(target, (VarianceExplained, Accuracy)):
        return f"{target.unit} ≥ {target.goal:g}"
    row = dict(target)
    return f"{UNITS[str(row['target'])]} ≥ {float(row['goal']):g}"


def certificate_scope(unit: str) -> str:
    """What an R² certificate is about, to say beside it (docs/mathematics.md#a-target-in-the-units-people-read): the
    training targets as the preparation left them, clipped to their public range, which a held-out or raw R² is not.
    Empty for accuracy (labels are not clipped)."""
    if unit != VarianceExplained.unit:
        return ""
    return "on the training targets as prepared (clipped to their public range)"


def summarise_certified(results: pd.DataFrame) -> pd.DataFrame:
    """One row per method of a frame of runs toward one target in R² or accuracy (``CERTIFIED_COLUMNS``).

    ``median_eps`` is the median total ε over every run (the preparation included; a refused run spent 0) and each
    ``median_eps_*`` the median of that part; ``released`` counts the runs that released a model, ``refused`` those
    refused before reading, ``met`` the released models whose in-sample quality meets the goal (evaluation only);
    ``median_lam`` is the median λ the released runs chose and ``lams`` how many different λ they chose;
    ``median_quality`` the released models' median in-sample quality and ``median_heldout`` their median held-out
    figure (the frame's ``HELDOUT`` column, NaN without it), both evaluation only; ``stopped`` is the most common
    reason a run released nothing ("" when every run released) and ``stopped_runs`` how many runs gave it.
    """
    if results.empty:
        return pd.DataFrame(columns=list(CERTIFIED_COLUMNS))
    if results["target"].nunique() != 1 or results["goal"].nunique() != 1:
        raise ValueError("summarise_certified expects the runs of a single target in R² or accuracy; filter first")
    rows = []
    for method, runs in results.groupby("method", sort=False):
        released = runs[~runs["nothing_released"].astype(bool)]
        reasons = runs.loc[runs["nothing_released"].astype(bool), "stopped"].value_counts()
        median_eps = median_with_inf(runs["eps_total"])
        heldout = released[HELDOUT] if HELDOUT in runs.columns else pd.Series(dtype=float)
        rows.append(
            {
                "method": method,
                "label": method_label(str(method)),
                "target": str(runs["target"].iloc[0]),
                "unit": UNITS[str(runs["target"].iloc[0])],
                "goal": float(runs["goal"].iloc[0]),
                "trials": len(runs),
                "median_eps": median_eps,
                "median_exp_eps": exp_epsilon(median_eps),
                **{f"median_{part}": float(runs[part].median()) for part, _ in CERTIFIED_PARTS},
                "released": len(released),
                "refused": int(runs["refused"].astype(bool).sum()),
                "met": int(released["success"].astype(bool).sum()),
                "median_lam": float(released["lam"].median()) if len(released) else math.nan,
                "lams": int(released["lam"].nunique()),
                "median_quality": float(released["quality"].median()) if len(released) else math.nan,
                "median_heldout": float(heldout.median()) if len(heldout) else math.nan,
                "stopped": str(reasons.index[0]) if len(reasons) else "",
                "stopped_runs": int(reasons.iloc[0]) if len(reasons) else 0,
                "eps_prep": float(runs["eps_prep"].iloc[0]),
                "prep_mode": str(runs["prep_mode"].iloc[0]),
                "delta": float(runs["delta"].max()),
                "delta_prep": float(runs["delta_prep"].max()),
            }
        )
    return pd.DataFrame(rows, columns=list(CERTIFIED_COLUMNS))


def certified_parts(row: pd.Series | dict[str, Any]) -> list[tuple[str, float]]:
    """(name, median ε) of the parts a summary row paid, the preparation first; parts that cost nothing left out."""
    return [(name, float(row[f"median_{part}"])) for part, name in CERTIFIED_PARTS if float(row[f"median_{part}"]) > 0]


def stopped_sentence(row: pd.Series | dict[str, Any]) -> str:
    """Why runs released nothing, in the package's own words ("" when every run released a model).

    A refusal decided before reading says so itself (its sentence ends "Nothing was read or spent"); a run that read
    the data and released nothing was charged what it spent.
    """
    values = dict(row)
    trials, released = int(values["trials"]), int(values["released"])
    if released == trials:
        return ""
    if int(values["refused"]) == trials:
        return f"Refused before reading the data: {values['stopped']}."
    runs = "run" if trials == 1 else "runs"
    count = f"{trials - released} of {trials} {runs}"
    spent = format_epsilon(float(values["median_eps"]))
    return (
        f"{count} released nothing: {values['stopped']} (the most common reason, {values['stopped_runs']} of them). "
        f"Each was charged what it spent (median ε = {spent} over all runs)."
    )
