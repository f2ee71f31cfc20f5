"""Declared parameter constraints (accfirst.validation.checked): checked once, at the outermost checked call."""

from __future__ import annotations

import pytest

from accfirst.errors import AccFirstError
from accfirst.validation import checked, validate_alpha


def counting(calls: list[object]):
    """``validate_alpha`` that records each value it checks."""

    def check(value: object) -> float:
        calls.append(value)
        return validate_alpha(value)

    return check


def test_a_checked_function_checks_and_cleans_what_it_is_given_from_outside() -> None:
    calls: list[object] = []

    @checked(alpha=counting(calls))
    def given(alpha: float) -> float:
        return alpha

    assert given(1) == 1 and type(given(3)) is float  # the clean value, not the one given
    with pytest.raises(AccFirstError, match="alpha"):
        given(-1.0)
    assert calls == [1, 3, -1.0]


def test_checked_functions_called_inside_a_checked_call_trust_their_arguments() -> None:
    inner_calls: list[object] = []

    @checked(alpha=counting(inner_calls))
    def inner(alpha: float) -> float:
        return alpha

    @checked(alpha=validate_alpha)
    def outer(alpha: float) -> float:
        return inner(alpha) + inner(-alpha)  # the second value breaks inner's constraint: trusted all the same

    assert outer(0.25) == 0.0
    assert inner_calls == []
    # On its own, outside any checked call, the inner function checks again.
    with pytest.raises(AccFirstError, match="alpha"):
        inner(-0.25)
    assert inner_calls == [-0.25]


def test_the_boundary_is_restored_after_a_checked_call_raises() -> None:
    @checked(alpha=validate_alpha)
    def failing(alpha: float) -> float:
        raise RuntimeError("inside")

    @checked(alpha=validate_alpha)
    def plain(alpha: float) -> float:
        return alpha

    with pytest.raises(RuntimeError, match="inside"):
        failing(0.1)
    with pytest.raises(AccFirstError, match="alpha"):
        plain(0.0)
