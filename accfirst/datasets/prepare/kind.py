"""A column's kind, numbers or text, read cell by cell and, when not declared, released privately
(docs/mathematics.md#preparing-the-data-privately).

A column's type as a file gives it is itself data: one cell ``unknown`` in a column of numbers
turns the whole column into text. So the private preparation never asks the column: each cell
is read on its own (``read_cells``) as a number (``12``, ``-3.5e2``, ``true``/``false`` as 1/0),
a gap (missing, or a marker such as ``?`` or ``NA``) or a word. A column whose kind the user
declared (``kind``, a range, levels, log(1 + x)) is read as that kind: a word in a numeric column
is a gap, a number in a text column is the level written as the number reads (``30.0`` and
``30`` are one level ``30``). For any other column ``PrivateKind`` releases the kind: with
``d = #numbers − #words`` over the training rows (gaps left out), replacing one row moves d by
at most 2, and the column is numeric iff ``d + Lap(2/ε) > 0`` (the Laplace mechanism, ε-DP).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from accfirst.datasets.columns import MISSING_MARKERS, Categorical, quoted
from accfirst.datasets.prepare.base import PRIVATE, Context, Step, StepRecord

KIND_SENSITIVITY = 2.0
UNDECIDED = "undecided"
_TRUTH = {"true": 1.0, "false": 0.0}


def number_text(value: float) -> str:
    """A number as a level's name: whole numbers without ``.0``, others as the shortest exact decimal."""
    return str(int(value)) if value.is_integer() else repr(value)


class Cells(NamedTuple):
    """A column read cell by cell: each cell's number (``nan`` for a word or a gap), where a gap is, its words."""

    numbers: np.ndarray
    gap: np.ndarray
    words: np.ndarray | None  # the stripped text of each cell (object), or None when every cell is a number or gap

    @property
    def is_number(self) -> np.ndarray:
        return np.asarray(~self.gap & ~np.isnan(self.numbers), dtype=bool)

    @property
    def is_word(self) -> np.ndarray:
        return np.asarray(~self.gap & np.isnan(self.numbers), dtype=bool)

    def as_numbers(self) -> np.ndarray:
        """The column as numeric: a word, a gap and a non-finite number are all ``nan`` (a gap)."""
        return np.where(np.isfinite(self.numbers), self.numbers, np.nan)

    def as_text(self) -> Categorical:
        """The column as text codes: a number is the level written as it reads, a gap has code −1."""
        keys = np.full(len(self.numbers), None, dtype=object)
        numbers = self.is_number
        if numbers.any():
            uniques, inverse = np.unique(self.numbers[numbers], return_inverse=True)
            keys[numbers] = np.array([number_text(float(value)) for value in uniques], dtype=object)[inverse]
        words = self.is_word
        if words.any() and self.words is not None:  # a word cell has its text
            keys[words] = self.words[words]
        codes, levels = pd.factorize(pd.Series(keys, dtype=object))
        return Categorical(codes.astype(np.int64), tuple(str(level) for level in levels))

    def as_kind(self, kind: str) -> np.ndarray | Categorical:
        return self.as_text() if kind == "text" else self.as_numbers()

    def matches(self, value: object) -> np.ndarray:
        """Where a cell equals a class given by the user: as numbers when both are, else as stripped text."""
        text = str(value).strip()
        try:
            number = float(_TRUTH.get(text.lower(), text))
        except ValueError:
            number = None
        if number is not None and not np.isnan(number):
            return np.asarray(self.is_number & (self.numbers == number), dtype=bool)
        return self.is_word & (self.words == text) if self.words is not None else np.zeros(len(self.gap), dtype=bool)


def read_cells(series: pd.Series) -> Cells:
    """Each cell of a column on its own (see the module docstring): no cell's reading depends on another's."""
    dtype = series.dtype
    if pd.api.types.is_numeric_dtype(dtype) and not (
        pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_complex_dtype(dtype)
    ):
        numbers = series.to_numpy(dtype=np.float64, na_value=np.nan)
        return Cells(numbers, np.isnan(numbers), None)
    codes, uniques = pd.factorize(series)  # each distinct value is read once; a missing one has code −1
    strings = pd.Series(uniques).astype("string").str.strip()
    lowered = strings.str.lower()
    gap = np.append((strings.isna() | lowered.isin(MISSING_MARKERS)).to_numpy(dtype=bool), True)
    truth = lowered.map(_TRUTH).astype("Float64")
    parsed = pd.to_numeric(strings.mask(truth.notna()), errors="coerce").astype("Float64").fillna(truth)
    numbers = np.append(parsed.to_numpy(dtype=np.float64, na_value=np.nan), np.nan)
    numbers[gap] = np.nan
    words = np.empty(len(strings) + 1, dtype=object)  # the last entry is the gaps' code (−1 from factorize)
    words[:-1] = strings.to_numpy(dtype=object)
    words[pd.isna(words)] = None
    return Cells(numbers[codes], gap[codes], words[codes])


class PrivateKind(Step):
    """Release whether a column without a declared kind is numeric or text."""

    name = "private kind"
    kind = PRIVATE
    weight = 0.25
    needs = "the column's kind is not declared"
    reads = "how many training cells are numbers and how many are words (gaps left out)"
    mechanism = "Laplace count difference, sensitivity 2"
    writes = "the column's kind: numeric (a word becomes a gap) or text (its levels are chosen privately)"

    def statistic(self, context: Context) -> np.ndarray:
        cells = _cells(context, self.plan.name)
        train = context.train
        return np.array([float(cells.is_number[train].sum() - cells.is_word[train].sum())])

    def sensitivity(self, context: Context) -> float:
        return KIND_SENSITIVITY

    def apply(self, context: Context) -> None:
        name = self.plan.name
        context.columns[name] = _cells(context, name).as_kind(self.plan.kind)

    def run(self, context: Context, epsilon: float, delta: float) -> StepRecord:
        plan = self.plan
        noisy = self.laplace_number(context, epsilon)
        plan.kind = "numeric" if noisy > 0 else "text"
        self.apply(context)
        what = "a word is a gap" if plan.kind == "numeric" else "its levels follow"
        return self.record(
            f"{quoted(plan.name)}: {plan.kind} (a noisy count of numbers over words; {what}) (ε = {epsilon:.3g})",
            epsilon,
        )


def _cells(context: Context, name: str) -> Cells:
    """The cells of a column whose kind is still to be released."""
    column = context.columns[name]
    if not isinstance(column, Cells):
        raise TypeError(f"column {name!r} already has its kind")
    return column
