"""Identifier columns are not features by default, decided from names and the schema alone
(docs/data-preparation.md#columns-and-types). Deterministic: fixed noise seeds, no false failures.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accfirst.datasets import ColumnSpec, from_frame
from accfirst.datasets.columns import read_table
from accfirst.datasets.prepare.identifiers import candidates, looks_like_identifier
from accfirst.datasets.prepare.schema import Schema
from accfirst.datasets.upload import UploadLimits
from accfirst.errors import DataError
from tests.data import customer_upload

N = 400
PREPARATIONS = ["private", "evaluation"]


def customers(seed: int = 0, **values: object) -> pd.DataFrame:
    """A customer table: two identifiers (a numeric and a text one), two features whose names contain 'id'-like
    letters but are not identifiers, and a spend that depends on the features."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "customer_id": rng.permutation(N) + 10_000,
            "ID": [f"C-{i:05d}" for i in rng.permutation(N)],
            "paid": rng.exponential(50, N).round(2),
            "valid_until": rng.integers(2024, 2030, N).astype(float),
        }
    )
    frame["spend"] = 2 * frame["paid"] + 10 * (frame["valid_until"] - 2027) + rng.normal(0, 5, N)
    return frame.assign(**values)


def _prepare(frame: pd.DataFrame, preparation: str, **options: object) -> object:
    return from_frame(frame, target="spend", task="ridge", preparation=preparation, noise_seed=0, **options)


@pytest.mark.parametrize("preparation", PREPARATIONS)
def test_identifier_names_are_left_out_and_the_other_columns_kept(preparation: str) -> None:
    data = _prepare(customers(), preparation)
    assert data.feature_names == ("paid", "valid_until")
    reasons = dict(data.report.dropped_columns)
    assert set(reasons) >= {"customer_id", "ID"}
    assert all(reasons[name].startswith("an identifier (by its name, or declared)") for name in ("customer_id", "ID"))
    (note,) = [step for step in data.report.steps if "as identifier(s)" in step]
    assert "'customer_id', 'ID'" in note and '{"customer_id": {"read": true}}' in note
    # Nothing is read from an identifier: no step of the preparation concerns it, and nothing is spent on it.
    assert not {"customer_id", "ID"} & set(data.preparation.to_frame()["column"])


# Values an identifier's decision would see if it read them: a count, a constant, two levels, gaps only.
OTHER_VALUES = [
    {"customer_id": np.arange(N) % 7, "ID": np.where(np.arange(N) % 2, "a", "b")},
    {"customer_id": np.ones(N), "ID": np.full(N, None)},
    {"customer_id": np.full(N, np.nan), "ID": np.arange(N, dtype=float), "paid": np.arange(N, dtype=float)},
    {"valid_until": [f"id-{i}" for i in range(N)], "paid": np.zeros(N)},
]


@pytest.mark.parametrize("values", OTHER_VALUES)
def test_the_decision_does_not_change_when_the_values_do(values: dict) -> None:
    """Values that a rule reading them would treat differently (a short code, a constant, a row number, text with a
    distinct value per row) leave the columns' decision as it was: it comes from the names alone."""
    limits = UploadLimits()
    before = candidates(read_table(customers(), "spend", limits), None, Schema())
    after = candidates(read_table(customers(seed=1, **values), "spend", limits), None, Schema())
    assert after == before == (["paid", "valid_until"], [], ["customer_id", "ID"])
    data = _prepare(customers(seed=1, **values), "private")
    assert [name for name, _ in data.report.dropped_columns][:2] == ["customer_id", "ID"]


@pytest.mark.parametrize(
    "name",
    ["customer_id", "ID", "id", "Id", "userId", "CustomerID", "IDNumber", "uuid", "GUID", "primary_key", "key", "pk",
     "customer_number", "account_no", "Order Nr", "phone_no", "Unnamed: 0", "index", "SSN", "row_id"],
)  # fmt: skip
def test_names_that_read_as_identifiers(name: str) -> None:
    assert looks_like_identifier(name)


@pytest.mark.parametrize(
    "name",
    ["paid", "valid_until", "idle", "IDLE", "Paid Amount", "avoid", "grid", "identity", "kid_count", "zip_code",
     "number_of_visits", "price_index", "no", "keyword", "monkey", "age", "", "é"],
)  # fmt: skip
def test_names_that_do_not(name: str) -> None:
    assert not looks_like_identifier(name)


@pytest.mark.parametrize("preparation", PREPARATIONS)
@pytest.mark.parametrize("entry", [{"read": True}, {"kind": "numeric"}, {"range": [10_000, 10_400]}])
def test_any_schema_entry_keeps_a_column_named_like_an_identifier(preparation: str, entry: dict) -> None:
    data = _prepare(customers(), preparation, schema={"columns": {"customer_id": entry}})
    assert data.feature_names == ("customer_id", "paid", "valid_until")
    assert [name for name, _ in data.report.dropped_columns][:1] == ["ID"]


@pytest.mark.parametrize("preparation", PREPARATIONS)
def test_features_chosen_explicitly_are_kept(preparation: str) -> None:
    data = _prepare(customers(), preparation, features=["customer_id", "paid"])
    assert data.feature_names == ("customer_id", "paid")
    assert not any("identifier" in step for step in data.report.steps)


@pytest.mark.parametrize("preparation", PREPARATIONS)
def test_a_declared_identifier_is_left_out_whatever_its_name(preparation: str) -> None:
    data = _prepare(customers(), preparation, schema={"columns": {"valid_until": {"kind": "identifier"}}})
    assert data.feature_names == ("paid",)
    assert [name for name, _ in data.report.dropped_columns][:3] == ["customer_id", "ID", "valid_until"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"schema": {"columns": {"paid": {"kind": "identifier"}}}, "features": ["paid"]},
            "feature column(s) 'paid' are declared identifiers, which are never features",
        ),
        ({"schema": {"columns": {"spend": {"kind": "identifier"}}}}, "the schema says that it is an identifier"),
        (
            {"schema": {"columns": {"paid": {"read": False}, "valid_until": {"kind": "identifier"}}}},
            "every column besides the target is left out: 'customer_id', 'ID', 'valid_until' as identifier(s)",
        ),
    ],
)
def test_identifiers_that_leave_nothing_or_are_chosen_are_refused(options: dict, message: str) -> None:
    for preparation in PREPARATIONS:
        with pytest.raises(DataError) as caught:
            _prepare(customers(), preparation, **options)
        assert message in str(caught.value)


def test_an_identifier_takes_no_other_metadata() -> None:
    with pytest.raises(DataError, match="an identifier is not a feature: it takes no range, levels or log1p"):
        ColumnSpec(kind="identifier", range=(0, 1))
    assert Schema.from_dict({"columns": {"account": {"kind": "identifier"}}}).to_dict() == {
        "columns": {"account": {"kind": "identifier"}}
    }


def test_the_customer_tables_id_column_is_not_read_by_the_private_preparation():
    """customer_id is a running number; leaving it out is decided from its name, so replacing its values changes
    no released number and no prepared row (the same noise seed)."""
    frame = customer_upload(2_000)
    options = {"target": "annual_spend", "task": "ridge", "noise_seed": 3}
    data = from_frame(frame, **options)
    assert "customer_id" not in data.feature_names
    assert "customer_id" not in set(data.preparation.to_frame()["column"])
    shuffled = frame.assign(customer_id=np.random.default_rng(0).permutation(frame["customer_id"].to_numpy()) * 7)
    other = from_frame(shuffled, **options)
    np.testing.assert_array_equal(data.X_train, other.X_train)
    assert data.report.steps == other.report.steps
