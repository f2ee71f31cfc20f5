"""The Gibbs posterior as an accuracy-first method (docs/mathematics.md#the-gibbs-posterior): one draw, no private test.

The sampling, its β and its (ε, δ) live with the learning problems (``accfirst.erm.gibbs``);
this class is the method as the rest of the package sees it. Its (ε, δ) is fixed in advance
(derived; docs/mathematics.md, “The Gibbs posterior”), and the search options' δ is the δ it
is asked for (0 asks the ridge posterior for a pure ε). It draws no noise from the options.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from accfirst.erm.gibbs import gibbs_bound, gibbs_run, ridge_beta
from accfirst.erm.ridge import RidgeProblem
from accfirst.errors import AccFirstError
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
        if summary.get("data_dependent_accuracy"):
            return (
                " The stated bound on ‖θ‖ cuts deep into the Gibbs posterior: its accuracy is then bounded only by "
                "γ/P(C), with P(C) read from the data (evaluation only), not guaranteed in advance."
            )
        return " The Gibbs posterior needs no private test: its accuracy follows from the posterior's " + (
            "spread, here only approximately (Laplace approximation)."
            if summary.get("approximate")
            else "known spread."
        )

    def run(self, setting: Setting, rng: np.random.Generator, exact: bool = False) -> RunResult:
        return gibbs_run(setting.problem, setting.alpha, setting.gamma, setting.options.delta, rng)

    def declared_bound(self, setting: Setting) -> tuple[float, float]:
        """Its (ε, δ), fixed in advance; refused (before any data are read) when the radius is too small.

        A ridge radius at or below M/2 leaves the posterior no accuracy bound known in advance, and
        the draws may fall outside the ball so often that the run gives up after reading the data: a
        privacy filter must not admit such a round.
        """
        problem, alpha, gamma = setting.problem, setting.alpha, setting.gamma
        if isinstance(problem, RidgeProblem) and ridge_beta(problem, alpha, gamma)[1] >= 1:
            raise AccFirstError(
                f"the Gibbs posterior cannot run inside a privacy filter with the radius ‖θ‖ ≤ {problem.norm_bound:.4g}: "
                f"at or below M/2 = {problem.free_radius(problem.lam):.4g} its accuracy is not known before it reads "
                "the data. Give a larger radius, or none"
            )
        return gibbs_bound(problem, alpha, gamma, setting.options.delta)
