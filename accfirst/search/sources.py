"""Where a worker process gets a built-in problem: rebuilt from the public data, nothing shipped per task."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from accfirst.datasets import load_builtin
from accfirst.erm.problems import Problem, prepared_problem


@dataclass(frozen=True)
class BuiltinProblem:
    """A built-in dataset's problem at λ, rebuilt in the worker from the public data (deterministic).

    A ``Source`` of ``accfirst.parallel.pool``.

    Parameters
    ----------
    name : a key of ``BUILTIN_DATASETS``.
    lam : λ.
    radius : a public bound R on ‖θ‖ (SPEC §13), or ``None``.
    """

    name: str
    lam: float
    radius: float | None = None

    @property
    def key(self) -> Hashable:
        return ("builtin", self.name, self.lam, self.radius)

    def build(self) -> Problem:
        data = load_builtin(self.name)  # not kept: the problem holds what it needs (ridge: p × p statistics)
        return prepared_problem(data, self.lam, self.radius)
