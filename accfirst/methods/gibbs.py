"""The Gibbs posterior as an accuracy-first method (docs/mathematics.md#the-gibbs-posterior): one draw, no private test.

The sampling, its β and its (ε, δ) live with the learning problems (``accfirst.erm.gibbs``);
this class is the method as the rest of the package sees it. Its (ε, δ) is fixed in advance
(derived; docs/mathematics.md, “The Gibbs posterior”), and the search options' δ is the δ it
is asked for (0 asks the ridge posterior for a pure ε). It draws no noise from the options.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from accfirst.erm.gibbs import gibbs_bound, gibbs_run
from accfirst.methods.base import Comparison, Method, Setting
from accfirst.methods.nr import NoiseReduction
from accfirst.result import RunResult


class GibbsPosterior(Method):
    """One θ from the Gibbs posterior at the accuracy-first β: its (ε, δ) is fixed before it runs."""

    key = "gibbs"
    label = "Gibbs posterior"
    in_sentence = "the Gibbs posterior"
    color = "#CC79A7"
    fixed_epsilon = True
    noises = frozenset()
    comparison = Comparison(NoiseReduction.key, "ε, δ", delta_caveat=True)
    # The ridge posterior's data-independent accuracy bound needs a radius above M/2 = R₀, and the
    # logistic one is unconstrained: it keeps the problem's own radius.
    uses_radius = False
    delta_note = "Derived in this project from the Gibbs posterior's strong log-concavity."

    def summary_note(self, summary: Mapping[str, object]) -> str:
        return " The Gibbs posterior needs no private test: its accuracy follows from the posterior's " + (
            "spread, here only approximately (Laplace approximation)."
            if summary.get("approximate")
            else "known spread."
        )

    def delta_refusal(self, task: str, delta: float) -> str | None:
        if delta == 0 and task != "ridge":
            return "The logistic Gibbs posterior has no pure-ε guarantee: choose δ > 0."
        return None

    def run(self, setting: Setting, rng: np.random.Generator, exact: bool = False) -> RunResult:
        return gibbs_run(setting.problem, setting.alpha, setting.gamma, setting.options.delta, rng)

    def declared_bound(self, setting: Setting) -> tuple[float, float]:
        """Its (ε, δ), fixed in advance; a run the plan refuses (a ridge radius at or below M/2, a shape the
        sampler cannot finish) is refused here, before any data are read."""
        return gibbs_bound(setting.problem, setting.alpha, setting.gamma, setting.options.delta)
