"""Checks at the package boundary: each returns the clean value or raises ``AccFirstError``.

Messages name the parameter, the allowed range and the value received, so the app
can show them as they are (CONVENTIONS: no silent coercion of bad input).
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import secrets
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any, TypeVar

import numpy as np

from accfirst.errors import AccFirstError

# How much of a value a message repeats: enough to recognise it, not a pasted 100 kB string.
ECHO_CHARS = 80
T = TypeVar("T")


def shorten(text: str, limit: int = ECHO_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters, the cut marked with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def echo(value: object, limit: int = ECHO_CHARS) -> str:
    """A value the user gave, for a message: its ``repr`` (quoted, escapes visible), cut to ``limit`` characters."""
    return shorten(repr(value), limit)


def _real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise AccFirstError(f"{name} must be a number; got {value!r}")
    result = float(value)
    if not math.isfinite(result):
        raise AccFirstError(f"{name} must be finite; got {result}")
    return result


def validate_alpha(alpha: object) -> float:
    """α, the target excess risk: a number > 0 (docs/mathematics.md#the-two-learning-problems)."""
    value = _real("alpha", alpha)
    if value <= 0:
        raise AccFirstError(f"alpha (the target excess risk) must be > 0; got {value}")
    return value


def validate_gamma(gamma: object) -> float:
    """γ, the failure probability: a number in (0, 1)."""
    value = _real("gamma", gamma)
    if not 0 < value < 1:
        raise AccFirstError(f"gamma (the failure probability) must be in (0, 1); got {value}")
    return value


def validate_delta(delta: object) -> float:
    """δ of an (ε, δ) guarantee: a number in (0, 1) (docs/mathematics.md#brownian-noise-reduction,
    docs/mathematics.md#many-analyses-one-budget)."""
    value = _real("delta", delta)
    if not 0 < value < 1:
        raise AccFirstError(f"delta must be in (0, 1); got {value}")
    return value


def validate_positive(name: str, value: object) -> float:
    """A finite number > 0."""
    result = _real(name, value)
    if result <= 0:
        raise AccFirstError(f"{name} must be > 0; got {result}")
    return result


def validate_nonnegative(name: str, value: object) -> float:
    """A finite number ≥ 0."""
    result = _real(name, value)
    if result < 0:
        raise AccFirstError(f"{name} must be ≥ 0; got {result}")
    return result


def validate_count(name: str, value: object, minimum: int) -> int:
    """A whole number ≥ ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise AccFirstError(f"{name} must be a whole number; got {value!r}")
    if int(value) < minimum:
        raise AccFirstError(f"{name} must be at least {minimum}; got {value}")
    return int(value)


def lookup(what: str, key: object, table: Mapping[str, T]) -> T:
    """The entry of ``table`` named ``key``; otherwise an ``AccFirstError`` naming ``what`` and the choices."""
    if isinstance(key, str) and key in table:
        return table[key]
    raise AccFirstError(f"unknown {what} {key!r}; choose one of {sorted(table)}")


# What every output of a release on real data says when its randomness came from a seed the user gave.
REPEATABLE = "repeatable run: not a private release"


def release_seed(seed: int | None) -> int:
    """The seed of a release's randomness: the one given (a repeatable run, whose noise anyone with the seed
    knows: not a private release), or 128 bits of operating-system entropy that are never shown."""
    return secrets.randbits(128) if seed is None else validate_count("seed", seed, 0)


def as_generator(rng: np.random.Generator | int | None) -> np.random.Generator:
    """A ``numpy.random.Generator`` from a generator, a seed, or ``None`` (fresh entropy)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and int(rng) >= 0):
        return np.random.default_rng(rng)
    raise AccFirstError(f"rng must be a numpy Generator, a non-negative integer seed or None; got {rng!r}")


def validate_probability(name: str, value: object, *, zero: bool = False, one: bool = False) -> float:
    """A probability in (0, 1), with 0 and/or 1 allowed when ``zero``/``one`` say so."""
    result = _real(name, value)
    low_ok = result > 0 or (zero and result == 0)
    high_ok = result < 1 or (one and result == 1)
    if not (low_ok and high_ok):
        interval = f"{'[' if zero else '('}0, 1{']' if one else ')'}"
        raise AccFirstError(f"{name} must be in {interval}; got {result}")
    return result


# --- declared parameter constraints ------------------------------------------------------

Check = Callable[[Any], Any]
F = TypeVar("F", bound=Callable[..., Any])


def positive(name: str) -> Check:
    """The check of a finite number > 0 named ``name`` in messages."""
    return functools.partial(validate_positive, name)


def count(name: str, minimum: int) -> Check:
    """The check of a whole number ≥ ``minimum`` named ``name`` in messages."""
    return lambda value: validate_count(name, value, minimum)


def probability(name: str, *, zero: bool = False, one: bool = False) -> Check:
    """The check of a probability named ``name``, with 0 and/or 1 allowed when ``zero``/``one`` say so."""
    return lambda value: validate_probability(name, value, zero=zero, one=one)


def optional(check: Check) -> Check:
    """``check``, or ``None`` let through."""
    return lambda value: None if value is None else check(value)


# True while a checked function runs: the checked functions it calls trust their arguments.
_INSIDE_CHECKED: ContextVar[bool] = ContextVar("inside_checked", default=False)


def checked(**constraints: Check) -> Callable[[F], F]:
    """Declare a public function's parameter constraints; they are checked once, at the boundary.

    Each keyword names a parameter and the check that turns the value given into the clean one (or
    raises ``AccFirstError`` saying what is wrong), as scikit-learn declares
    ``_parameter_constraints``. A default goes through its check like a value given (``rng=None``
    becomes a generator drawing from the operating system). The function receives the clean values
    and trusts them; the declaration is kept as ``parameter_constraints`` on the wrapper, for
    documentation and tests.

    The boundary is the outermost checked call: while it runs, the checked functions it calls (with
    values its own checks cleaned, or computed from them) skip their checks of the values they are
    given, as scikit-learn skips nested validation; a default they fall back on is still checked.
    Called on their own, from outside any checked function, they check everything.
    """

    def declare(function: F) -> F:
        signature = inspect.signature(function)
        unknown = sorted(set(constraints) - set(signature.parameters))
        if unknown:
            raise TypeError(f"{function.__qualname__} has no parameter(s) {unknown}")

        @functools.wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            given = set(bound.arguments)
            bound.apply_defaults()
            nested = _INSIDE_CHECKED.get()
            for name, check in constraints.items():
                if not nested or name not in given:
                    bound.arguments[name] = check(bound.arguments[name])
            if nested:
                return function(*bound.args, **bound.kwargs)
            inside = _INSIDE_CHECKED.set(True)
            try:
                return function(*bound.args, **bound.kwargs)
            finally:
                _INSIDE_CHECKED.reset(inside)

        call.parameter_constraints = dict(constraints)  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]

    return declare
