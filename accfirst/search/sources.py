"""Where a worker process gets a built-in problem: rebuilt from the built-in data, nothing shipped per task."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from accfirst.datasets import BUILTIN_DATASETS, load_builtin
from accfirst.datasets.prepare.noise import NoiseSeed
from accfirst.erm.problem import Problem
from accfirst.erm.problems import prepared_problem
from accfirst.errors import DataError


@dataclass(frozen=True)
class BuiltinProblem:
    """A built-in dataset's problem at λ, rebuilt in the worker (deterministic).

    A ``Source`` of ``accfirst.parallel.pool``. A synthetic set is generated from public
    parameters; a real table is prepared privately (docs/mathematics.md#preparing-the-data-privately), and every process
    must prepare it with the same noise: ``noise`` carries it (the app's ``SecretSeed``, drawn once per server and never
    shown, so the release stays private; or a whole number, a repeatable run).

    Parameters
    ----------
    name : a key of ``BUILTIN_DATASETS``.
    lam : λ.
    radius : a public bound R on ‖θ‖ (docs/mathematics.md#a-public-norm-bound), or ``None``.
    noise : the seed of a real table's preparation (required for one; unused for a synthetic set).
    """

    name: str
    lam: float
    radius: float | None = None
    noise: NoiseSeed = None

    @property
    def key(self) -> Hashable:
        # The secret's hash stays in memory, like the secret itself: the key is never shown.
        return ("builtin", self.name, self.lam, self.radius, self.noise)

    def build(self) -> Problem:
        if self.noise is None and not BUILTIN_DATASETS[self.name].public:
            raise DataError(
                f"the real table {self.name!r} is prepared with noise: every process needs the same noise seed "
                "(a SecretSeed) to build the same problem"
            )
        data = load_builtin(self.name, noise_seed=self.noise)  # not kept: the problem holds what it needs
        return prepared_problem(data, self.lam, self.radius)
