"""Declared metadata: what the user states about a table before it is read
(docs/mathematics.md#preparing-the-data-privately).

A ``Schema`` holds, per column, a ``ColumnSpec``: its kind (numbers, text, or an identifier,
which is never a feature), a range ``[low, high]`` for numbers, a list of levels for text,
whether the column may be read at all, and whether it enters as ``log(1 + x)``; and, for
logistic regression, the positive class. Any entry for a column also keeps it among the
features when its name reads as an identifier (``prepare.identifiers``). Everything in it is public: it costs no privacy, and the private preparation reads
nothing from the data to decide what it declares. ``load_schema`` reads one from a small
JSON file (or YAML, with the PyYAML that Dask already installs)::

    {
      "positive_class": "yes",
      "columns": {
        "age": {"range": [18, 100]},
        "income": {"range": [0, 1000000], "log1p": true},
        "region": {"levels": ["north", "south", "east", "west"]},
        "customer_id": {"read": false}
      }
    }
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from accfirst.errors import DataError
from accfirst.validation import echo

IDENTIFIER = "identifier"
KINDS = ("numeric", "text", IDENTIFIER)
_ENTRY_KEYS = ("kind", "range", "levels", "read", "log1p")
_SCHEMA_KEYS = ("columns", "positive_class")


def _flag(where: str, name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise DataError(f"{where}: {name} must be true or false; got {echo(value)}")
    return value


def _range(where: str, value: object) -> tuple[float, float]:
    if not (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) for v in value)
    ):
        raise DataError(f"{where}: range must be two finite numbers [low, high]; got {echo(value)}")
    low, high = float(value[0]), float(value[1])
    if not low < high:
        raise DataError(f"{where}: range must have low < high; got [{low:g}, {high:g}]")
    return low, high


def _levels(where: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not value:
        raise DataError(f"{where}: levels must be a non-empty list of texts; got {echo(value)}")
    levels = tuple(str(level).strip() for level in value)
    if "" in levels or len(set(levels)) != len(levels):
        raise DataError(f"{where}: levels must be distinct and non-empty; got {echo(list(levels))}")
    return levels


@dataclass(frozen=True)
class ColumnSpec:
    """What is declared about one column (nothing here is read from the data).

    Parameters
    ----------
    kind : ``"numeric"`` or ``"text"``; ``None`` takes the type the file gives the column;
        ``"identifier"`` leaves the column out of the default features, as a name such as
        ``customer_id`` does.
    range : ``(low, high)`` in the column's own units (before ``log(1 + x)``): values are
        clipped to it, and no private range is estimated.
    levels : the text levels that get a 0/1 column each (others and gaps get none), in this
        order; no private level selection is run.
    read : ``False`` keeps the column out entirely ("do not read"); any entry, ``read=True``
        alone too, keeps a column whose name reads as an identifier among the features.
    log1p : the column enters as ``log(1 + max(x, 0))``.
    """

    kind: str | None = None
    range: tuple[float, float] | None = None
    levels: tuple[str, ...] | None = None
    read: bool = True
    log1p: bool = False
    where: str = field(default="a column", repr=False, compare=False)

    def __post_init__(self) -> None:
        where = self.where
        if self.kind is not None and self.kind not in KINDS:
            raise DataError(f"{where}: kind must be 'numeric', 'text' or 'identifier'; got {echo(self.kind)}")
        _flag(where, "read", self.read)
        _flag(where, "log1p", self.log1p)
        if self.range is not None:
            object.__setattr__(self, "range", _range(where, self.range))
        if self.levels is not None:
            object.__setattr__(self, "levels", _levels(where, self.levels))
        if self.range is not None and self.levels is not None:
            raise DataError(f"{where}: declare a range (numbers) or levels (text), not both")
        if self.kind == "text" and (self.range is not None or self.log1p):
            raise DataError(f"{where}: a text column takes levels, not a range or log1p")
        if self.kind == "numeric" and self.levels is not None:
            raise DataError(f"{where}: a numeric column takes a range, not levels")
        if self.kind == IDENTIFIER and (self.range is not None or self.levels is not None or self.log1p):
            raise DataError(f"{where}: an identifier is not a feature: it takes no range, levels or log1p")
        if not self.read and (self.kind, self.range, self.levels, self.log1p) != (None, None, None, False):
            raise DataError(f"{where}: a column that is not read takes no other metadata")

    @property
    def declared_kind(self) -> str | None:
        """The kind the declaration implies: ``kind``, or numeric for a range, text for levels."""
        if self.kind is not None:
            return self.kind
        if self.range is not None or self.log1p:
            return "numeric"
        return "text" if self.levels is not None else None


@dataclass(frozen=True)
class Schema:
    """Declared metadata of a table: a ``ColumnSpec`` per named column and the positive class.

    Parameters
    ----------
    columns : ``{column name: ColumnSpec}`` (or a tuple of pairs); columns not named are
        undeclared: the private preparation estimates what it needs for them.
    positive_class : the target value mapped to +1 (logistic regression).
    """

    columns: tuple[tuple[str, ColumnSpec], ...] = ()
    positive_class: str | float | None = None

    def __post_init__(self) -> None:
        pairs = self.columns.items() if isinstance(self.columns, Mapping) else self.columns
        clean = tuple((str(name).strip(), spec) for name, spec in pairs)
        for name, spec in clean:
            if not isinstance(spec, ColumnSpec):
                raise DataError(f"column {echo(name)}: its metadata must be a ColumnSpec; got {type(spec).__name__}")
        names = [name for name, _ in clean]
        if len(set(names)) != len(names):
            raise DataError("the schema names a column more than once")
        positive = self.positive_class
        if positive is not None and (isinstance(positive, bool) or not isinstance(positive, (str, numbers.Real))):
            raise DataError(f"positive_class must be a text or a number; got {echo(positive)}")
        object.__setattr__(self, "columns", clean)

    def column(self, name: str) -> ColumnSpec:
        """The declaration of ``name`` (an empty ``ColumnSpec`` when it is not named)."""
        return dict(self.columns).get(name, ColumnSpec())

    @property
    def names(self) -> tuple[str, ...]:
        """The columns the schema names."""
        return tuple(name for name, _ in self.columns)

    def with_ranges(self, ranges: Mapping[str, object]) -> Schema:
        """This schema with a declared range for each column of ``ranges`` (``{"age": (18, 100)}``), the short form of
        ``{"columns": {"age": {"range": [18, 100]}}}``; a column the schema already gives a range is refused."""
        if not isinstance(ranges, Mapping):
            raise DataError(
                f"ranges must map column names to (low, high), e.g. {{'age': (18, 100)}}; got {echo(ranges)}"
            )
        specs = dict(self.columns)
        for name, value in ranges.items():
            where = f"ranges[{echo(str(name))}]"
            key = str(name).strip()
            spec = specs.get(key, ColumnSpec())
            if spec.range is not None:
                raise DataError(f"{where}: the schema already declares the range of {echo(key)}; declare it once")
            specs[key] = replace(spec, range=_range(where, value), where=where)
        return Schema(tuple(specs.items()), self.positive_class)

    @classmethod
    def from_dict(cls, record: object) -> Schema:
        """A schema from plain data (a parsed JSON or YAML file): see the module docstring."""
        if not isinstance(record, Mapping):
            raise DataError(f"a schema must be a mapping with 'columns' (and 'positive_class'); got {echo(record)}")
        unknown = sorted(set(record) - set(_SCHEMA_KEYS))
        if unknown:
            raise DataError(f"unknown schema key(s) {echo(unknown)}; allowed: {list(_SCHEMA_KEYS)}")
        columns = record.get("columns", {})
        if not isinstance(columns, Mapping):
            raise DataError(f"the schema's 'columns' must map column names to their metadata; got {echo(columns)}")
        specs = []
        for name, entry in columns.items():
            where = f"schema column {echo(str(name))}"
            if not isinstance(entry, Mapping):
                raise DataError(
                    f"{where}: its metadata must be a mapping such as {{'range': [0, 1]}}; got {echo(entry)}"
                )
            unknown = sorted(set(entry) - set(_ENTRY_KEYS))
            if unknown:
                raise DataError(f"{where}: unknown key(s) {echo(unknown)}; allowed: {list(_ENTRY_KEYS)}")
            specs.append((str(name), ColumnSpec(where=where, **entry)))
        return cls(tuple(specs), record.get("positive_class"))

    def to_dict(self) -> dict[str, object]:
        """Plain data that ``from_dict`` reads back (what ``load_schema`` reads from a file)."""
        columns: dict[str, dict[str, object]] = {}
        for name, spec in self.columns:
            entry: dict[str, object] = {}
            if spec.kind is not None:
                entry["kind"] = spec.kind
            if spec.range is not None:
                entry["range"] = list(spec.range)
            if spec.levels is not None:
                entry["levels"] = list(spec.levels)
            if not spec.read:
                entry["read"] = False
            if spec.log1p:
                entry["log1p"] = True
            columns[name] = entry
        record: dict[str, object] = {"columns": columns}
        if self.positive_class is not None:
            record["positive_class"] = self.positive_class
        return record


def load_schema(path: str | Path) -> Schema:
    """Read a ``Schema`` from a JSON file (``.yaml``/``.yml``: YAML) — see the module docstring."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read the schema file {path.name}: {getattr(exc, 'strerror', None) or exc}") from None
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml  # PyYAML, installed with Dask; only for the files that need it

        try:
            record = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise DataError(f"the schema file {path.name} is not valid YAML: {exc}") from None
    else:
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"the schema file {path.name} is not valid JSON: {exc}") from None
    return Schema.from_dict(record)
