"""The settings of a run as data: a JSON record and a Python snippet that reproduces it.

The app offers both as downloads, so that any view can be rerun from a shell with the
same numbers (CONVENTIONS: everything the app shows can be produced without it).
Every value that reaches the snippet is written with ``repr`` of a plain Python
value (str, int, float, bool, None, or a tuple or mapping of them: a schema of declared
metadata), so a column or file name such as ``"x'); import os #"`` stays a string literal
and cannot inject code.

A run on a real table (an upload, a built-in real table) prepares it privately: rerunning the
snippet prepares it again, a fresh release (new noise, ε_prep paid again), unless the record
holds a ``noise_seed``, and then the rerun is a repeatable run, not a private release. The
snippet says which, and its totals include the preparation (``prepared_problem``).
"""

from __future__ import annotations

import inspect
import json
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from importlib import metadata
from typing import Any

from accfirst.datasets import BUILTIN_DATASETS, Schema
from accfirst.datasets.prepared import EVALUATION_MODE, EXCLUDES_PREPARATION
from accfirst.datasets.preprocess import preparation_options
from accfirst.erm.quality import QualityTarget, quality_target
from accfirst.errors import AccFirstError
from accfirst.interpret.certified import target_text
from accfirst.methods.options import SearchOptions
from accfirst.methods.pipeline import check_certified
from accfirst.methods.registry import validate_methods
from accfirst.methods.relative import RelativeTarget
from accfirst.validation import REPEATABLE, validate_positive

TASK_PROBLEMS = {"ridge": "RidgeProblem", "logistic": "LogisticProblem"}
# Keyword arguments of accfirst.datasets.load_builtin / from_frame that a spec may carry.
BUILTIN_OPTIONS = ("test_size", "seed")
UPLOAD_OPTIONS = (
    "target",
    "task",
    "features",
    "positive_class",
    "schema",
    "preparation",
    "prep_epsilon",
    "prep_delta",
    "budget",
    "noise_seed",
    "log1p_columns",
    "log1p_target",
    "scaling",
    "feature_bound",
    "target_bound",
    "center",
    "standardize",
    "missing",
    "max_levels",
    "test_size",
    "seed",
)
# Preparation choices whose defaults changed: every new upload spec states them, so that a
# record means the same preparation whatever later defaults become. A record written before
# they existed lacks them and meant the preparation of that time (LEGACY_PREPARATION): before
# the private preparation became the default, every preparation was evaluation only.
PREPARATION_OPTIONS = ("preparation", "center", "standardize", "missing", "max_levels", "budget")
LEGACY_PREPARATION = {
    "preparation": "evaluation",
    "center": False,
    "standardize": False,
    "missing": "drop",
    "max_levels": 0,
    "budget": None,  # before the table's budget capped it, ε_prep was what the statistics need
}
# Search options whose defaults changed: a record without them was written before they existed and meant these.
LEGACY_SEARCH = {"radius_mode": "none"}
RESULTS_FILE = "accfirst_rerun.csv"


class PlainMap(tuple[tuple[str, Any], ...]):
    """A mapping of plain values (a schema) held as ``(key, value)`` pairs: hashable, written as a dict."""


Plain = str | int | float | bool | None | tuple[Any, ...]


def _plain(name: str, value: object) -> Plain:
    """``value`` as a plain Python literal (numpy scalars, lists, mappings and a ``Schema`` converted), or raise."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, Schema):
        value = value.to_dict()
    if isinstance(value, Mapping):
        return PlainMap((str(key), _plain(f"{name}.{key}", item)) for key, item in value.items())
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        result = float(value)
        if not math.isfinite(result):
            raise AccFirstError(f"{name} must be finite; got {result}")
        return result
    if isinstance(value, (list, tuple)):
        return tuple(_plain(name, item) for item in value)
    raise AccFirstError(f"{name} must be a string, number, boolean, None or a list or mapping of them; got {value!r}")


def _plain_number(name: str, value: object) -> str | float:
    """``value`` as ``_plain`` makes it, for ``float``/``int``: a number or a string; anything else is a ``TypeError``."""
    plain = _plain(name, value)
    if plain is None or isinstance(plain, tuple):
        raise TypeError(f"{name} must be a number; got {plain!r}")
    return plain


def _json(value: Plain) -> object:
    """A plain value as JSON data: a ``PlainMap`` as an object, a tuple as a list."""
    if isinstance(value, PlainMap):
        return {key: _json(item) for key, item in value}
    if isinstance(value, tuple):
        return [_json(item) for item in value]
    return value


@dataclass(frozen=True)
class DatasetSpec:
    """Where a run's data comes from.

    Either a built-in (``builtin`` names it; ``options`` are ``load_builtin`` keywords)
    or an uploaded file (``filename``; ``options`` are ``from_frame`` keywords, which
    include the target, task and scaling chosen in the app).
    """

    builtin: str | None = None
    filename: str | None = None
    options: tuple[tuple[str, Plain], ...] = ()

    def __post_init__(self) -> None:
        if (self.builtin is None) == (self.filename is None):
            raise AccFirstError("a dataset spec names either a built-in dataset or an uploaded file")
        allowed = BUILTIN_OPTIONS if self.builtin is not None else UPLOAD_OPTIONS
        clean = []
        for name, value in self.options:
            if name not in allowed:
                raise AccFirstError(f"unknown dataset option {name!r}; allowed: {list(allowed)}")
            clean.append((name, _plain(name, value)))
        object.__setattr__(self, "options", tuple(clean))
        object.__setattr__(self, "builtin", None if self.builtin is None else str(self.builtin))
        object.__setattr__(self, "filename", None if self.filename is None else str(self.filename))

    @classmethod
    def from_builtin(cls, name: str, **options: Plain) -> DatasetSpec:
        """A built-in dataset, with ``load_builtin`` keyword arguments (test_size, seed)."""
        return cls(builtin=name, options=tuple(options.items()))

    @classmethod
    def from_upload(cls, filename: str, **options: object) -> DatasetSpec:
        """An uploaded file and the ``from_frame`` keyword arguments that prepared it.

        The preparation options left out take ``from_frame``'s defaults, written out.
        """
        defaults = inspect.signature(preparation_options).parameters
        stated = {name: defaults[name].default for name in PREPARATION_OPTIONS if name not in options}
        return cls(filename=filename, options=tuple({**options, **stated}.items()))

    def to_dict(self) -> dict[str, object]:
        options = {name: _json(value) for name, value in self.options}
        if self.builtin is not None:
            return {"builtin": self.builtin, "options": options}
        return {"filename": self.filename, "options": options}


@dataclass(frozen=True)
class RunSettings:
    """Everything ``run_trials`` needs, plus the dataset, λ and the public radius: one view of the app.

    ``task`` ("ridge" or "logistic") picks the problem class, built with ``lam`` and
    ``radius`` (a public bound on ‖θ‖, docs/mathematics.md#a-public-norm-bound; ``None`` for none); ``alphas`` …
    ``seed`` are the ``run_trials`` parameters of the same name (``alphas`` is a tuple, so the explorer's single α and a
    sweep's list share the type) and ``options`` its search options; ``kappas`` the relative targets κ
    (docs/mathematics.md#a-relative-accuracy-target) of ``run_trials``, empty for none; ``goals`` its targets in the
    units people read (docs/mathematics.md#a-target-in-the-units-people-read), R² ≥ r for ridge or accuracy ≥ a for
    logistic, empty for none. With a goal, ``options.lambdas`` says how λ is set (``None``: chosen privately from the
    default grid; one value: that λ, which is then ``lam``) and ``options.ceiling`` the most a run may spend.
    """

    dataset: DatasetSpec
    task: str
    lam: float
    alphas: tuple[float, ...]
    gamma: float
    methods: tuple[str, ...]
    trials: int
    seed: int | None
    options: SearchOptions = SearchOptions()
    radius: float | None = None
    extra: dict[str, Plain] = field(default_factory=dict, compare=False)
    kappas: tuple[float, ...] = ()
    goals: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.task not in TASK_PROBLEMS:
            raise AccFirstError(f"task must be one of {list(TASK_PROBLEMS)}; got {self.task!r}")
        set_ = object.__setattr__
        set_(self, "lam", float(_plain_number("lam", self.lam)))
        if self.radius is not None:
            set_(self, "radius", validate_positive("radius", _plain("radius", self.radius)))
        set_(self, "alphas", tuple(float(_plain_number("alphas", a)) for a in tuple(self.alphas)))
        set_(self, "kappas", tuple(RelativeTarget(float(_plain_number("kappas", k))).kappa for k in tuple(self.kappas)))
        set_(
            self, "goals", tuple(self.quality_target(float(_plain_number("goals", g))).goal for g in tuple(self.goals))
        )
        set_(self, "gamma", float(_plain_number("gamma", self.gamma)))
        set_(self, "methods", tuple(str(m) for m in self.methods))
        set_(self, "trials", int(_plain_number("trials", self.trials)))
        if self.seed is not None:
            set_(self, "seed", int(_plain_number("seed", self.seed)))
        plain: dict[str, Any] = {name: _plain(name, value) for name, value in self.options.to_dict().items()}
        set_(self, "options", SearchOptions(**plain))
        validate_methods(self.methods, self.options)
        for goal in self.goals:
            for method in self.methods:
                check_certified(method, self.quality_target(goal))
        set_(self, "extra", {str(k): _plain(str(k), v) for k, v in self.extra.items()})

    def quality_target(self, goal: float) -> QualityTarget:
        """``goal`` as this task's target in the units people read (R² for ridge, accuracy for logistic)."""
        return quality_target(self.task, goal)

    def run_trials_kwargs(self) -> dict[str, object]:
        """Keyword arguments of ``run_trials`` (all but the problem)."""
        relative = {"kappas": list(self.kappas)} if self.kappas else {}
        quality = {"goals": list(self.goals)} if self.goals else {}
        return {
            "alphas": list(self.alphas),
            **relative,
            **quality,
            "gamma": self.gamma,
            "methods": list(self.methods),
            "trials": self.trials,
            "seed": self.seed,
            **self.options.to_dict(),
        }

    def problem_kwargs(self) -> dict[str, float]:
        """Keyword arguments of the problem class besides the data: λ, and the radius when one is set."""
        return {"lam": self.lam} | ({} if self.radius is None else {"radius": self.radius})

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: the dataset spec, λ, the radius, the ``run_trials`` parameters and any ``extra`` view state."""
        record: dict[str, object] = {
            "accfirst_version": _version(),
            "dataset": self.dataset.to_dict(),
            "task": self.task,
            "lam": self.lam,
            "radius": self.radius,
            **self.run_trials_kwargs(),
        }
        if self.extra:
            record["extra"] = {k: _json(v) for k, v in self.extra.items()}
        return record


def _version() -> str:
    try:
        return metadata.version("accfirst")
    except metadata.PackageNotFoundError:  # running from a source tree that is not installed
        return "unknown"


def settings_json(settings: RunSettings) -> str:
    """The settings as indented JSON (the app's "settings JSON" download)."""
    return json.dumps(settings.to_dict(), indent=2, ensure_ascii=False) + "\n"


def settings_from_json(text: str) -> RunSettings:
    """Read back ``settings_json`` output (raises ``AccFirstError`` on a malformed record)."""
    try:
        record = json.loads(text)
        data = record["dataset"]
        stated = data.get("options", {})
        if data.get("filename") is not None:
            stated = {**{k: v for k, v in LEGACY_PREPARATION.items() if k not in stated}, **stated}
        dataset_options = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in stated.items())
        dataset = DatasetSpec(builtin=data.get("builtin"), filename=data.get("filename"), options=dataset_options)
        extra = {k: tuple(v) if isinstance(v, list) else v for k, v in record.get("extra", {}).items()}
        # Options a record lacks (written by an older version) take their defaults, or what they meant then.
        stated = {f.name: record[f.name] for f in fields(SearchOptions) if f.name in record}
        options = SearchOptions(**{**LEGACY_SEARCH, **stated})
        return RunSettings(
            dataset=dataset,
            task=record["task"],
            lam=record["lam"],
            radius=record.get("radius"),  # absent from records older than the radius
            alphas=tuple(record["alphas"]),
            kappas=tuple(record.get("kappas", ())),  # absent from records older than the relative target
            goals=tuple(record.get("goals", ())),  # absent from records older than the targets in R² and accuracy
            gamma=record["gamma"],
            methods=tuple(record["methods"]),
            trials=record["trials"],
            seed=record["seed"],
            options=options,
            extra=extra,
        )
    except (KeyError, TypeError, json.JSONDecodeError) as exc:
        raise AccFirstError(f"not an accfirst settings record: {exc}") from None


def _call(function: str, positional: list[str], keywords: list[tuple[str, Plain]], indent: str = "") -> str:
    """``function(arg, key=repr(value), ...)`` over several lines; keyword names come from our own allowlists."""
    inner = indent + "    "
    lines = [f"{inner}{arg}," for arg in positional]
    lines += [f"{inner}{name}={_literal(value)}," for name, value in keywords]
    return f"{function}(\n" + "\n".join(lines) + f"\n{indent})"


def _literal(value: Plain) -> str:
    """Source text of a plain value: ``repr`` (a tuple is written as a list for readability, a ``PlainMap`` as a dict)."""
    if isinstance(value, PlainMap):
        return "{" + ", ".join(f"{key!r}: {_literal(item)}" for key, item in value) + "}"
    if isinstance(value, tuple):
        return "[" + ", ".join(_literal(item) for item in value) + "]"
    return repr(value)


def release_note(spec: DatasetSpec) -> str:
    """What rerunning ``spec``'s preparation is (docs/mathematics.md#preparing-the-data-privately): "" for public data,
    else a comment for the snippet."""
    options = dict(spec.options)
    if spec.builtin is not None and BUILTIN_DATASETS[spec.builtin].public:
        return ""
    if options.get("preparation") == EVALUATION_MODE:
        return f"# preparation='evaluation': every ε {EXCLUDES_PREPARATION}."
    if options.get("noise_seed") is not None:
        return f"# noise_seed is set: a {REPEATABLE} (anyone with the seed knows the preparation's noise)."
    return (
        "# A private preparation: rerunning this prepares the table again, a fresh release (new noise, ε_prep paid\n"
        f"# again). With noise_seed=N it repeats one preparation: a {REPEATABLE}."
    )


def runs_note(settings: RunSettings, real: bool) -> str:
    """What the runs' seed makes of them: a comment for the snippet (a seed on real data is no private release)."""
    if settings.seed is None:
        return "# seed=None: the runs' noise comes from the operating system, a fresh release each time."
    if real:
        return f"# seed={settings.seed}: a {REPEATABLE} (anyone with the seed can replay the runs' noise)."
    return "# Data generated from public parameters: a seed makes the simulation repeatable."


def reproduction_snippet(settings: RunSettings) -> str:
    """A runnable Python script that reruns ``settings`` with accfirst and prints the medians.

    For a built-in dataset it runs as it is; for an upload it reads the file from the
    working directory under its original name (edit ``path`` if it lives elsewhere). A real
    table is prepared again (``release_note`` says what that is); the totals include the preparation.
    """
    spec = settings.dataset
    note = release_note(spec)
    if settings.seed is None:
        same = "Same settings, fresh noise: a new release."
    else:
        same = "Same settings and seed, same numbers." if not note else "Same settings and seed, a new preparation."
    lines = [
        f'"""Reproduce an accfirst run (accfirst {_version()}). {same}"""',
        "",
    ]
    if spec.builtin is not None:
        lines += [
            "from accfirst import run_trials",
            "from accfirst.datasets import load_builtin",
            "from accfirst.erm.problems import prepared_problem",
            "",
            *([note] if note else []),
            "data = " + _call("load_builtin", [_literal(spec.builtin)], list(spec.options)),
        ]
    else:
        lines += [
            "from pathlib import Path",
            "",
            "from accfirst import run_trials",
            "from accfirst.datasets import from_frame, read_upload",
            "from accfirst.erm.problems import prepared_problem",
            "",
            f"path = Path({_literal(spec.filename)})  # the file you uploaded",
            "frame = read_upload(path.read_bytes(), path.name)",
            note,
            "data = " + _call("from_frame", ["frame"], list(spec.options)),
        ]
    kwargs = settings.run_trials_kwargs()
    lines += [
        "problem = prepared_problem(data, "
        + ", ".join(f"{name}={_literal(value)}" for name, value in settings.problem_kwargs().items())
        + ")  # carries the preparation's ε: every total includes it",
        runs_note(settings, bool(note)),
        *_goals_note(settings),
        "results = " + _call("run_trials", ["problem"], [(k, _plain(k, v)) for k, v in kwargs.items()]),
        "",
        f"print(results.groupby(['method', {_summary_column(settings)!r}])"
        f"[['eps_total', 'eps_prep', {'quality' if settings.goals else 'excess_risk'!r}]].median())",
        f"results.to_csv({RESULTS_FILE!r}, index=False)",
        "",
    ]
    return "\n".join(lines)


def _summary_column(settings: RunSettings) -> str:
    """The column the snippet's medians are grouped by: the goal, κ or α."""
    return "goal" if settings.goals else "kappa" if settings.kappas else "alpha"


def _goals_note(settings: RunSettings) -> list[str]:
    """What a run toward a target in R² or accuracy certifies and how it sets λ: comments for the snippet."""
    if not settings.goals:
        return []
    targets = ", ".join(target_text(target) for target in map(settings.quality_target, settings.goals))
    lambdas = settings.options.lambdas
    how = (
        "λ chosen privately from the default public grid (lambdas=None)"
        if lambdas is None
        else f"λ fixed at {', '.join(f'{lam:g}' for lam in lambdas)} (lambdas)"
    )
    return [
        f"# goals: certify {targets} with probability ≥ 1 − gamma by noise reduction, {how}, spending at most",
        f"# ceiling = {settings.options.ceiling:g} beyond the preparation; 'quality' is the in-sample figure (evaluation only).",
    ]
