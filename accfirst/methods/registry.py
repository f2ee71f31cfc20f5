"""The registry of accuracy-first methods: ``METHODS`` maps a key to its ``Method``.

Everything that offers a choice of method — ``run_trials``, the command line, the app's
method picker, the figures' colours and labels — reads this registry, so a new method is one
file with one ``Method`` class plus one line below. The order is the registration order, and
it matters: a method's position seeds its runs (``accfirst.search.experiments.trial_rng``), so
new methods go at the end and a registered method never moves.
"""

from __future__ import annotations

from collections.abc import Iterable

from accfirst.errors import AccFirstError
from accfirst.methods.base import Method
from accfirst.methods.doubling import Doubling
from accfirst.methods.gibbs import GibbsPosterior
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import SearchOptions
from accfirst.methods.theory import Theory

METHODS: dict[str, Method] = {}


def register(method: Method) -> Method:
    """Add ``method`` at the end of the registry (its key must be new); returns it."""
    if not isinstance(method, Method):
        raise AccFirstError(f"only a Method can be registered; got {method!r}")
    if method.key in METHODS:
        raise AccFirstError(f"a method with key {method.key!r} is registered already")
    METHODS[method.key] = method
    return method


def unregister(key: str) -> None:
    """Remove the method ``key`` (the last one only: the positions of the others seed their runs)."""
    if key not in METHODS or list(METHODS)[-1] != key:
        raise AccFirstError(f"only the last registered method can be removed; got {key!r}")
    del METHODS[key]


for _method in (NoiseReduction(), Doubling(), Theory(), GibbsPosterior()):
    register(_method)


def get_method(key: str) -> Method:
    """The registered method ``key``; ``AccFirstError`` naming the choices otherwise."""
    try:
        return METHODS[key]
    except (KeyError, TypeError):
        raise AccFirstError(f"unknown method {key!r}; choose from {list(METHODS)}") from None


def method_position(key: str) -> int:
    """The registration position of ``key``: part of the seed of its runs."""
    return list(METHODS).index(get_method(key).key)


def method_label(key: str) -> str:
    """The display name of the method ``key`` ("nr" → "Noise reduction"); the key itself if none has it."""
    method = METHODS.get(key)
    return key if method is None else method.label


def method_labels() -> dict[str, str]:
    """``{key: label}`` of every registered method, in order (for pickers)."""
    return {key: method.label for key, method in METHODS.items()}


def paper_methods() -> tuple[str, ...]:
    """The paper's methods, the default selection of the app and the command line."""
    return tuple(key for key, method in METHODS.items() if method.paper)


def method_keys(*, tests_accuracy: bool | None = None, high_probability: bool | None = None) -> tuple[str, ...]:
    """The keys of the registered methods, in order, kept to those with the given capabilities."""
    return tuple(
        key
        for key, method in METHODS.items()
        if (tests_accuracy is None or method.tests_accuracy == tests_accuracy)
        and (high_probability is None or method.high_probability == high_probability)
    )


def validate_methods(methods: Iterable[str], options: SearchOptions | None = None) -> tuple[str, ...]:
    """The chosen method keys, each registered and able to run with ``options`` (default options if ``None``)."""
    chosen = tuple(methods)
    if not chosen:
        raise AccFirstError("choose at least one method")
    unknown = [m for m in chosen if m not in METHODS]
    if unknown:
        raise AccFirstError(f"unknown method(s) {unknown}; choose from {list(METHODS)}")
    for key in chosen:
        METHODS[key].check(SearchOptions() if options is None else options)
    return chosen
