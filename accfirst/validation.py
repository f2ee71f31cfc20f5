"""Checks at the package boundary: each returns the clean value or raises ``AccFirstError``.

Messages name the parameter, the allowed range and the value received, so the app
can show them as they are (CONVENTIONS: no silent coercion of bad input).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from accfirst.errors import AccFirstError

# How much of a value a message repeats: enough to recognise it, not a pasted 100 kB string.
ECHO_CHARS = 80


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
    """α, the target excess risk: a number > 0 (SPEC §2)."""
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
    """δ of an (ε, δ) guarantee: a number in (0, 1) (SPEC §14.4, §15)."""
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
