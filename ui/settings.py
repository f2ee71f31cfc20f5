"""Settings that live in the URL, so that a link reproduces a view.

A page declares its settings once, as ``Setting`` objects (short query-parameter key,
label, default and the widget's range or options), then:

>>> warnings = restore_from_url(SETTINGS)      # before the widgets, every run
>>> alpha = ALPHA.widget(st.sidebar)           # draws the widget, returns its value
>>> ...
>>> write_to_url(SETTINGS)                     # after the widgets, every run

``restore_from_url`` reads the query string the first time a setting is seen in a
session: a valid value becomes the widget's starting value; an invalid one is listed
in the page's one notice of ignored link settings (``ui.link_notice``) and the default
is used. A link's value passes the checks a typed one meets: numbers as a number box
takes them (ASCII digits, finite), within the widget's range, one of its options. From
then on the widget owns the value (kept across page switches with ``persist_state="session"``) and
``write_to_url`` mirrors it into the URL, deleting parameters whose value is ``None``
("automatic"). Values are written in a short, stable text form (``methods=nr,theory``)
that does not depend on widget labels.

Each setting's widget key is ``"<scope>.<key>"``, so two pages may both use ``alpha``.
"""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import streamlit as st

from accfirst import CALIBRATIONS, SearchOptions
from accfirst.erm.generators import NOISES
from accfirst.erm.shape import ProblemShape
from accfirst.interpret import format_delta, format_epsilon, guarantee_text
from accfirst.mechanisms.brownian import DEFAULT_DELTA
from accfirst.mechanisms.calibration import calibrated_epsilon, clips_query
from accfirst.methods.pipeline import run_rows
from accfirst.methods.registry import METHODS, method_labels, paper_methods
from accfirst.validation import echo, shorten
from ui.link_notice import report_ignored
from ui.work import MAX_LEVELS


class InvalidValue(ValueError):
    """A query-parameter value a setting cannot use; the message says why."""


# What a number box accepts: ASCII digits (Python's float() and int() also read other scripts' digits,
# underscores and surrounding spaces, which no visitor can type there).
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", re.ASCII)
_WHOLE = re.compile(r"[+-]?\d+", re.ASCII)


def _float(raw: str, what: str) -> float:
    if not _NUMBER.fullmatch(raw):
        raise InvalidValue(f"{what} must be a number; got {echo(raw)}")
    value = float(raw)
    if not math.isfinite(value):
        raise InvalidValue(f"{what} must be finite; got {echo(raw)}")
    return value


def _int(raw: str, what: str) -> int:
    if not _WHOLE.fullmatch(raw):
        raise InvalidValue(f"{what} must be a whole number; got {echo(raw)}")
    return int(raw)


def _within(value: Any, low: Any, high: Any, what: str, text: Callable[[Any], str]) -> Any:
    """``value`` if it lies in ``[low, high]``; else ``InvalidValue`` naming the range, each number written by ``text``."""
    if not low <= value <= high:
        raise InvalidValue(f"{what} must be between {text(low)} and {text(high)}; got {text(value)}")
    return value


def _whole_text(value: int) -> str:
    return shorten(str(value))


def format_number(value: float) -> str:
    """Shortest text that reads back as the same float (``repr``), ints without ".0"."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


@dataclass(frozen=True)
class Setting(ABC):
    """One URL-backed setting and its widget.

    Parameters
    ----------
    scope : the page (or "app" for the shared sidebar); prefixes the widget key.
    key : the query parameter (short: ``alpha``, ``gen``).
    label : the widget's label.
    default : the value when the URL has none (or an invalid one).
    help : the widget's tooltip.
    """

    scope: str
    key: str
    label: str
    default: Any
    help: str | None = None

    @property
    def state_key(self) -> str:
        """The widget's key in ``st.session_state``."""
        return f"{self.scope}.{self.key}"

    @abstractmethod
    def parse(self, raw: list[str]) -> Any:
        """The value for the query parameter's values ``raw``; raises ``InvalidValue``."""

    @abstractmethod
    def to_url(self, value: Any) -> str | list[str] | None:
        """The query-parameter text of ``value``; ``None`` removes the parameter."""

    @abstractmethod
    def _draw(self, where: Any, **kwargs: Any) -> Any:
        """Draw the widget (its value comes from session state)."""

    def describe(self) -> str:
        """What values are allowed, for warnings."""
        return ""

    def widget(self, where: Any = None, **kwargs: Any) -> Any:
        """Draw the widget in ``where`` (default: main area) and return its value.

        Extra keyword arguments go to the Streamlit widget (e.g. ``disabled``).
        """
        if self.state_key not in st.session_state:  # a page that skipped restore_from_url
            st.session_state[self.state_key] = self.default
        kwargs.setdefault("help", self.help)
        return self._draw(where or st, key=self.state_key, persist_state="session", **kwargs)

    @property
    def value(self) -> Any:
        """The current value (after ``restore_from_url``)."""
        return st.session_state.get(self.state_key, self.default)


@dataclass(frozen=True)
class FloatSlider(Setting):
    """A float slider on ``[low, high]`` (any value in range is accepted from the URL)."""

    low: float = 0.0
    high: float = 1.0
    step: float = 0.01
    format: str = "%.3f"

    def parse(self, raw: list[str]) -> float:
        return _within(_float(raw[-1], self.key), self.low, self.high, self.key, "{:g}".format)

    def to_url(self, value: float) -> str:
        return format_number(value)

    def _draw(self, where: Any, **kwargs: Any) -> float:
        return where.slider(
            self.label, min_value=self.low, max_value=self.high, step=self.step, format=self.format, **kwargs
        )


@dataclass(frozen=True)
class IntSetting(Setting):
    """A whole number in ``[low, high]``: a slider, or a number box with ``box=True``."""

    low: int = 0
    high: int = 100
    box: bool = False
    step: int = 1

    def parse(self, raw: list[str]) -> int:
        return _within(_int(raw[-1], self.key), self.low, self.high, self.key, _whole_text)

    def to_url(self, value: int) -> str:
        return str(int(value))

    def _draw(self, where: Any, **kwargs: Any) -> int:
        if self.box:
            return where.number_input(self.label, min_value=self.low, max_value=self.high, step=self.step, **kwargs)
        return where.slider(self.label, min_value=self.low, max_value=self.high, step=self.step, **kwargs)


@dataclass(frozen=True)
class Toggle(Setting):
    """On or off (a toggle switch); the URL holds ``1`` or ``0``."""

    def parse(self, raw: list[str]) -> bool:
        text = raw[-1].lower()
        if text in ("1", "true", "on", "yes"):
            return True
        if text in ("0", "false", "off", "no"):
            return False
        raise InvalidValue(f"{self.key} must be 1 or 0; got {echo(raw[-1])}")

    def to_url(self, value: bool) -> str:
        return "1" if value else "0"

    def _draw(self, where: Any, **kwargs: Any) -> bool:
        return bool(where.toggle(self.label, **kwargs))


@dataclass(frozen=True)
class OptionalFloat(Setting):
    """A float that may be left blank (``None`` = automatic); the URL holds it only when set.

    Only ``> 0`` is checked here; combinations (ε_min < ε_max) are the page's to explain.
    """

    placeholder: str = "automatic"
    format: str = "%g"

    def parse(self, raw: list[str]) -> float | None:
        if raw[-1] == "":
            return None
        value = _float(raw[-1], self.key)
        if value <= 0:
            raise InvalidValue(f"{self.key} must be > 0; got {value:g}")
        return value

    def to_url(self, value: float | None) -> str | None:
        return None if value is None else format_number(value)

    def _draw(self, where: Any, **kwargs: Any) -> float | None:
        kwargs.setdefault("placeholder", self.placeholder)
        # value=None: a box the visitor empties is blank again (automatic); Streamlit's default would read it as 0.
        return where.number_input(self.label, value=None, min_value=0.0, step=None, format=self.format, **kwargs)


@dataclass(frozen=True)
class OptionalInt(Setting):
    """A whole number in ``[low, high]`` that may be left blank (``None``); the URL holds it only when set."""

    low: int = 0
    high: int = 2**32 - 1
    placeholder: str = "automatic"

    def parse(self, raw: list[str]) -> int | None:
        if raw[-1] == "":
            return None
        return _within(_int(raw[-1], self.key), self.low, self.high, self.key, _whole_text)

    def to_url(self, value: int | None) -> str | None:
        return None if value is None else str(int(value))

    def _draw(self, where: Any, **kwargs: Any) -> int | None:
        kwargs.setdefault("placeholder", self.placeholder)
        # value=None: a box the visitor empties is blank again, as in OptionalFloat.
        return where.number_input(self.label, value=None, min_value=self.low, max_value=self.high, step=1, **kwargs)


@dataclass(frozen=True)
class Choice(Setting):
    """One of ``options`` (strings or numbers); the URL holds the option itself, not its label.

    ``widget_type``: "radio", "selectbox", "select_slider" (ordered numbers, e.g. a log
    scale) or "segmented_control". ``labels`` maps options to what the widget shows; they
    must not change while the page is open: Streamlit keeps a choice by its label's text,
    so a label that changed (a live number in it) would drop or replace the choice. Live
    text goes beside the options instead (a radio's ``captions``).
    """

    options: tuple[Any, ...] = ()
    labels: Mapping[Any, str] = field(default_factory=dict)
    widget_type: str = "radio"

    def _label(self, option: Any) -> str:
        if option in self.labels:
            return self.labels[option]
        return f"{option:g}" if isinstance(option, float) else str(option)

    def parse(self, raw: list[str]) -> Any:
        text = raw[-1]
        number = float(text) if _NUMBER.fullmatch(text) else math.nan
        for option in self.options:
            if (isinstance(option, float) and math.isclose(number, option, rel_tol=1e-9)) or str(option) == text:
                return option
        raise InvalidValue(f"{self.key} must be one of {self.describe()}; got {echo(text)}")

    def to_url(self, value: Any) -> str:
        return format_number(value) if isinstance(value, float) else str(value)

    def describe(self) -> str:
        return ", ".join(self.to_url(o) for o in self.options)

    def _draw(self, where: Any, **kwargs: Any) -> Any:
        draw: Callable[..., Any] = getattr(where, self.widget_type)
        if self.widget_type == "segmented_control":
            kwargs["selection_mode"] = "single"
            kwargs["required"] = True
        return draw(self.label, options=list(self.options), format_func=self._label, **kwargs)


@dataclass(frozen=True)
class MultiChoice(Setting):
    """A subset of ``options`` (pills); the URL holds them comma-separated (``methods=nr,theory``).

    An empty selection is allowed by the widget; the page explains why nothing runs.
    """

    options: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)

    def parse(self, raw: list[str]) -> list[str]:
        items = [item for text in raw for item in text.split(",") if item]
        unknown = [item for item in items if item not in self.options]
        if unknown:
            raise InvalidValue(f"{self.key} may contain {', '.join(self.options)}; got {shorten(', '.join(unknown))}")
        return [o for o in self.options if o in items]

    def to_url(self, value: Sequence[str]) -> str:
        return ",".join(o for o in self.options if o in value)

    def _draw(self, where: Any, **kwargs: Any) -> list[str]:
        chosen = where.pills(
            self.label,
            options=list(self.options),
            selection_mode="multi",
            format_func=lambda o: self.labels.get(o, o),
            wrap=True,  # in a column the pills would otherwise scroll sideways, hiding the last method
            **kwargs,
        )
        return [o for o in self.options if o in (chosen or [])]


def restore_from_url(settings: Sequence[Setting]) -> None:
    """Seed each setting's widget from the URL the first time it is seen in this session.

    Valid values become the starting value; invalid ones leave the default and are listed
    in the page's one notice of ignored link settings (``ui.link_notice``, as plain text:
    the value came from a link). Settings already in session state (the user has been
    here) are left alone.
    """
    ignored = []
    for setting in settings:
        if setting.state_key in st.session_state:
            continue
        raw = st.query_params.get_all(setting.key)
        value = setting.default
        if raw:
            try:
                value = setting.parse(raw)
            except InvalidValue as exc:
                default = setting.to_url(setting.default)
                ignored.append(f"{exc}; using the default ({'automatic' if default is None else default}).")
        st.session_state[setting.state_key] = value
    report_ignored(ignored)


WRITTEN_KEY = "ui.written_to_url"


def _as_list(text: str | list[str] | None) -> list[str]:
    return [] if text is None else [text] if isinstance(text, str) else list(text)


def written_by_the_app(key: str) -> bool:
    """Whether the query parameter ``key`` holds what this session's pages wrote there themselves (``write_to_url``),
    rather than a value a link brought: a notice about a link's values must not blame the link for the app's own."""
    written = st.session_state.get(WRITTEN_KEY, {})
    return key in written and st.query_params.get_all(key) == written[key]


def write_to_url(settings: Sequence[Setting]) -> None:
    """Mirror the settings' current values into the query string, in one browser update.

    The update is sent on every run, even when the server's copy of the URL already matches: fast
    changes interrupt runs, and an interrupted run can move the browser's URL after the next run has
    read it, so comparing would leave a stale link. The browser ignores an update that changes nothing.
    """
    values: dict[str, str | list[str]] = {}
    written = st.session_state.setdefault(WRITTEN_KEY, {})
    for setting in settings:
        text = setting.to_url(setting.value)
        written[setting.key] = _as_list(text)
        if text is None:
            if setting.key in st.query_params:
                del st.query_params[setting.key]
        else:
            values[setting.key] = text
    st.query_params.update(values)


def url_values(settings: Sequence[Setting]) -> dict[str, Any]:
    """``{key: current value}`` for the settings (e.g. for a settings record)."""
    return {setting.key: setting.value for setting in settings}


def generator_setting(scope: str) -> Choice:
    """The private hypothesis generator (docs/mathematics.md#private-hypothesis-generators), as every page offers it."""
    return Choice(
        scope,
        "gen",
        "Private hypothesis generator",
        "paper",
        options=("paper", "covariance", "output"),
        labels={
            "paper": "the paper's (covariance for ridge, output for logistic)",
            "covariance": "covariance perturbation (ridge only)",
            "output": "output perturbation",
        },
    )


FAILURES = (0.01, 0.05, 0.1, 0.2)
SEARCH_FAILURES = (0.001, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)


def failure_setting(
    scope: str,
    key: str,
    symbol: str,
    default: float,
    *,
    options: tuple[float, ...] = FAILURES,
    widget_type: str = "select_slider",
    help: str | None = None,
) -> Choice:
    """A failure probability ("Failure probability γ"), one of a few usual values (``FAILURES`` by default)."""
    return Choice(
        scope, key, f"Failure probability {symbol}", default, options=options, widget_type=widget_type, help=help
    )


CALIBRATION_LABELS = {
    "theorem": "theorem: the paper's Thm 3.2 (spends almost none of γ)",
    "paper-code": "paper's code: the authors' tighter choice, behind their plots",
    "exact": "exact: the theorem's test, noise solved to spend exactly γ",
    "exact-opt": "exact, optimised: also the best ratio of the two noises",
    "exact-paper": "exact, authors' criterion: also the best threshold",
    "exact-paper-opt": "exact, authors' criterion, optimised: least ε measured (default; derived)",
}


def calibration_setting(scope: str) -> Choice:
    """The above-threshold calibration (docs/mathematics.md#interactiveabovethreshold,
    docs/mathematics.md#exact-calibrations), as every page offers it."""
    return Choice(
        scope,
        "cal",
        "Above-threshold calibration",
        SearchOptions.calibration,
        options=tuple(CALIBRATIONS),
        labels=CALIBRATION_LABELS,
        help="How the private test is calibrated. Every choice guarantees excess risk ≤ α with probability "
        "≥ 1 − γ; the exact ones pay the least privacy for it: they compute the test's worst-case failure "
        "probability by quadrature (derived in this project, checked by Monte Carlo) and spend exactly γ. "
        "The paper's plots used its code's.",
    )


def calibration_captions(T: int, gamma: float, shape: ProblemShape, alpha: float) -> list[str]:
    """The test's ε_A = c(T, γ)·Δ_R(α)/α under each calibration here, in the options' order
    (docs/mathematics.md#exact-calibrations).

    Captions under the radio's fixed labels: a label that changed with α would drop the choice
    (Streamlit keeps a radio's choice by its label text).

    Parameters
    ----------
    T, gamma : the number of levels and the failure probability (``calibration_constant`` is cached per pair).
    shape : the problem's public constants (Δ_R(α) clipped where the calibration clips its query).
    alpha : the target excess risk.
    """
    return [
        f"ε_A = {format_epsilon(calibrated_epsilon(name, T, gamma, run_rows(shape, name).test_sensitivity(alpha, clipped=clips_query(name)), alpha))}"
        for name in CALIBRATION_LABELS
    ]


def noise_setting(scope: str) -> Choice:
    """The noise of the private hypotheses (docs/mathematics.md#private-hypothesis-generators,
    docs/mathematics.md#brownian-noise-reduction), as every page offers it."""
    return Choice(
        scope,
        "noise",
        "Noise of the private models",
        "laplace",
        options=tuple(NOISES),
        labels={"laplace": "Laplace", "gaussian": "Gaussian"},
        widget_type="segmented_control",
        help="Laplace noise (the paper's) adds no δ. Gaussian noise reduction (Brownian motion) gives an ex-post "
        "(ε, δ) guarantee with the δ below, and often a smaller generation ε when there are many features. The "
        "theory approach has no Gaussian version.",
    )


def noise_caption(noise: str, delta: float, prep_delta: float) -> str:
    """What the chosen noise makes of the searches' guarantee on this table (``interpret.guarantee_text``)."""
    searches = [m.in_sentence for m in METHODS.values() if m.noises >= frozenset(NOISES)]
    own = delta if noise == "gaussian" else 0.0
    return f"With {noise.capitalize()} noise, {' and '.join(searches)} each give {guarantee_text(own, prep_delta)}."


DELTA_OPTIONS = (0.0, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4)


def delta_setting(scope: str) -> Choice:
    """δ of the (ε, δ) guarantees (Gaussian noise, docs/mathematics.md#brownian-noise-reduction; the Gibbs posterior,
    docs/mathematics.md#the-gibbs-posterior), as every page offers it."""
    return Choice(
        scope,
        "delta",
        "δ of the (ε, δ) guarantees (Gaussian noise, Gibbs posterior)",
        DEFAULT_DELTA,
        options=DELTA_OPTIONS,
        labels={d: format_delta(d) for d in DELTA_OPTIONS},
        widget_type="select_slider",
        help="The δ of the methods' own (ε, δ) guarantees: the ε holds except with probability δ. It applies to "
        "Gaussian noise and to the Gibbs posterior; with Laplace noise, noise reduction, doubling and the theory "
        "approach add no δ of their own (a table prepared privately adds its preparation's δ to every method). "
        "δ = 0 asks the Gibbs posterior for pure ε (ridge only).",
    )


def generator_problem(generator: str | None, task: str) -> str | None:
    """Why ``generator`` cannot run on this task, or ``None``."""
    if generator == "covariance" and task != "ridge":
        return "Covariance perturbation needs ridge regression; this dataset is logistic. Pick output perturbation."
    return None


def delta_problem(delta: float, methods: Sequence[str], task: str, noise: str = "laplace") -> str | None:
    """Why ``delta`` cannot run with these methods, this noise and this task, or ``None``."""
    if delta == 0 and noise == "gaussian":
        return "Gaussian noise gives an (ε, δ) guarantee: choose δ > 0, or Laplace noise for a pure ε."
    return next((refusal for m in methods if (refusal := METHODS[m].delta_refusal(task, delta))), None)


class SearchSettings(NamedTuple):
    """The settings of a search that the explorer and the sweep both offer (unpack them in this order)."""

    methods: MultiChoice
    gamma: Choice
    levels: IntSetting
    generator: Choice
    calibration: Choice
    delta: Choice

    def chosen_generator(self) -> str | None:
        """The generator chosen: ``None`` for the paper's pairing, as ``SearchOptions`` takes it."""
        chosen: str = self.generator.value
        return None if chosen == "paper" else chosen

    def options(self, radius_mode: str, **more: Any) -> SearchOptions:
        """The ``SearchOptions`` these settings hold now, on ``radius_mode``; ``more``: the page's other options."""
        return SearchOptions(
            T=int(self.levels.value),
            generator=self.chosen_generator(),
            calibration=self.calibration.value,
            delta=float(self.delta.value),
            radius_mode=radius_mode,
            **more,
        )


def search_settings(scope: str) -> SearchSettings:
    """The methods, γ, T, generator, calibration and δ of a search, as the explorer and the sweep offer them."""
    return SearchSettings(
        MultiChoice(
            scope,
            "methods",
            "Methods",
            list(paper_methods()),
            options=tuple(METHODS),
            labels=method_labels(),
            help="Noise reduction (the paper's method), the doubling baseline, the theory approach (one ε fixed up "
            "front), and the Gibbs posterior (an (ε, δ) competitor that needs no test).",
        ),
        failure_setting(
            scope,
            "gamma",
            "γ",
            0.1,
            options=SEARCH_FAILURES,
            help="Noise reduction and doubling meet α with probability at least 1 − γ.",
        ),
        IntSetting(scope, "T", "Number of levels T", SearchOptions.T, low=2, high=MAX_LEVELS, box=True, step=100),
        generator_setting(scope),
        calibration_setting(scope),
        delta_setting(scope),
    )
