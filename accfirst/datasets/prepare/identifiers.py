"""Identifier columns: left out of the features by default, decided from names and the schema alone
(docs/data-preparation.md#columns-and-types, docs/mathematics.md#preparing-the-data-privately).

A row's identifier (a customer number, a key, the index pandas writes into a file) says which row it
is, not anything a model can generalise from; taken as a feature it is fitted as if it did (a number
the model multiplies, or text whose every level is one row, which in private mode spends a level
selection to learn nothing). Reading the values to find such a column would need a charged
mechanism, so the decision reads none: a column is an identifier when the schema declares it so
(``"kind": "identifier"``) or, unless the schema names it, when its name reads as one. The name is
split into lowercase words (at spaces, punctuation, digits and camelCase: ``customerID`` → customer,
id) and is an identifier when

- a word is ``id``, ``ids``, ``uuid`` or ``guid`` (``customer_id``, ``ID``, ``UserId``; not ``paid``,
  ``idle`` or ``valid_until``, whose words are other words);
- the last word is ``key``, ``pk`` or ``uid``;
- the last word is a number word (``number``, ``no``, ``num``, ``nr``, ``code``) after a word naming
  whose number it is (``customer_number``, ``account_no``, ``order_code``; not ``zip_code`` or
  ``number_of_visits``);
- it is ``index``, ``ssn`` or ``serial``, or pandas' ``Unnamed: 0`` (an index written without a name).

Any entry for the column in the schema keeps it (``{"read": true}``, a ``kind``, a range …), and so
does naming it among the features explicitly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from accfirst.datasets.columns import Table, candidate_features, listing
from accfirst.datasets.prepare.schema import IDENTIFIER, Schema
from accfirst.errors import DataError
from accfirst.validation import ECHO_CHARS, shorten

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
IDENTIFIER_WORDS = frozenset({"id", "ids", "uuid", "guid"})
LAST_WORDS = frozenset({"key", "pk", "uid"})
NUMBER_WORDS = frozenset({"number", "no", "num", "nr", "code"})
# Whose number a "…_number" column holds when it identifies a row (a person, an account, a record).
OWNER_WORDS = frozenset(
    "account case client contract customer employee invoice member order passport patient phone policy record "
    "reference row serial staff ticket transaction user".split()
)
NAMES = frozenset({"index", "ssn", "serial"})


def words(name: str) -> list[str]:
    """A column name's words, lowercase (``"customerID"`` → ``["customer", "id"]``)."""
    return [word.lower() for word in _WORD.findall(name)]


def looks_like_identifier(name: str) -> bool:
    """Whether a column's name reads as a row identifier (see the module docstring); no value is read."""
    parts = words(name)
    if not parts:
        return False
    if " ".join(parts) in NAMES or (parts[0] == "unnamed" and len(parts) > 1 and all(p.isdigit() for p in parts[1:])):
        return True
    if IDENTIFIER_WORDS.intersection(parts) or parts[-1] in LAST_WORDS:
        return True
    return len(parts) > 1 and parts[-1] in NUMBER_WORDS and parts[-2] in OWNER_WORDS


class Candidates(NamedTuple):
    """The feature columns to read, the columns declared not to be read, and those left out as identifiers."""

    names: list[str]
    skipped: list[str]
    identifiers: list[str]


def candidates(table: Table, features: Sequence[str] | None, schema: Schema) -> Candidates:
    """The feature columns: ``features`` as chosen, or every column but the target, the columns the schema says not
    to read and the identifiers (declared, or named like one and not named in the schema)."""
    skipped = [name for name, spec in schema.columns if not spec.read]
    declared = [name for name, spec in schema.columns if spec.kind == IDENTIFIER]
    if features is not None:
        chosen = candidate_features(table, features, skipped)
        refused = [name for name in chosen if name in declared]
        if refused:
            raise DataError(
                f"feature column(s) {listing(refused)} are declared identifiers, which are never features: remove "
                "them from the features, or declare their kind 'numeric' or 'text'"
            )
        return Candidates(chosen, skipped, [])
    named = set(schema.names)
    identifiers = [
        name
        for name in table.columns
        if name != table.target and (name in declared or (name not in named and looks_like_identifier(name)))
    ]
    left_out = {*skipped, *identifiers, table.target}
    if identifiers and all(name in left_out for name in table.columns):
        raise DataError(
            f"every column besides the target is left out: {listing(identifiers)} as identifier(s) (by name, or "
            f"declared){'' if not skipped else f', {listing(skipped)} as declared not to be read'}; to use an "
            f'identifier as a feature, declare it in the schema (e.g. {{"read": true}}) or choose the features'
        )
    return Candidates(candidate_features(table, None, [*skipped, *identifiers]), skipped, identifiers)


IDENTIFIER_REASON = (
    "an identifier (by its name, or declared), not a feature by default: declare it in the schema "
    '(e.g. {"read": true}, or its "kind") or choose it among the features to use it'
)


def identifier_note(identifiers: Sequence[str]) -> str:
    """The report's note on the identifiers left out: which, why, and how to keep one."""
    example = shorten(identifiers[0], ECHO_CHARS)
    return (
        f"left out {listing(identifiers)} as identifier(s) (by name, or declared; no value read): a row's "
        f'identifier is not a feature; to use one, declare it in the schema, e.g. {{"{example}": {{"read": true}}}} '
        'or its "kind", or choose the features explicitly'
    )
