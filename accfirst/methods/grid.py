"""The grid of privacy levels that noise reduction searches (docs/mathematics.md#the-epsilon-grid)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from accfirst.erm.generators import HypothesisGenerator
from accfirst.erm.problem import Problem
from accfirst.erm.shape import ProblemShape
from accfirst.erm.theory import theory_epsilon
from accfirst.errors import AccFirstError
from accfirst.validation import checked, count, optional, positive

SPACINGS = ("geometric", "linear")


def default_eps_range(
    problem: Problem | ProblemShape, alpha: float, generator: str | HypothesisGenerator | None = None
) -> tuple[float, float]:
    """The paper's (ε_min, ε_max) = (1/n, 4E), E from the theory approach (docs/mathematics.md#the-epsilon-grid)."""
    return 1.0 / problem.n, 4.0 * theory_epsilon(problem, alpha, generator)


@checked(
    T=count("T (number of privacy levels)", 2),
    eps_min=optional(positive("eps_min")),
    eps_max=optional(positive("eps_max")),
)
def epsilon_grid(
    problem: Problem | ProblemShape,
    alpha: float,
    generator: str | HypothesisGenerator | None = None,
    T: int = 1000,
    eps_min: float | None = None,
    eps_max: float | None = None,
    spacing: str = "geometric",
) -> NDArray[np.float64]:
    """ε_1 < … < ε_T from ε_min to ε_max, both ends included (docs/mathematics.md#the-epsilon-grid).

    Parameters
    ----------
    problem, alpha, generator : fix the defaults ε_min = 1/n and ε_max = 4E.
    T : number of levels, ≥ 2.
    eps_min, eps_max : override the ends; need 0 < ε_min < ε_max.
    spacing : "geometric" (the paper's) or "linear".
    """
    default_min, default_max = default_eps_range(problem, alpha, generator)
    low = default_min if eps_min is None else eps_min
    high = default_max if eps_max is None else eps_max
    if not low < high:
        raise AccFirstError(f"eps_min must be smaller than eps_max; got eps_min={low:g}, eps_max={high:g}")
    if spacing == "geometric":
        grid = np.geomspace(low, high, T)
    elif spacing == "linear":
        grid = np.linspace(low, high, T)
    else:
        raise AccFirstError(f"spacing must be one of {SPACINGS}; got {spacing!r}")
    grid[0], grid[-1] = low, high
    if np.any(np.diff(grid) <= 0):
        raise AccFirstError(f"{T} levels between {low:g} and {high:g} are too close to tell apart; use fewer levels")
    return grid
