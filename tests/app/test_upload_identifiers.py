"""The upload's metadata table and identifier columns: "do not read" is ticked for a name that reads as an
identifier, as the package leaves such a column out by default, and unticking it keeps the column."""

from __future__ import annotations

import numpy as np
import pandas as pd

from accfirst.datasets import from_frame
from ui.upload import HIGH, KIND, LEVELS, LOG1P, LOW, NAME, SKIP, declared_schema

KINDS = {"customer_id": "numeric", "paid": "numeric", "spend": "numeric"}


def table(skip: dict[str, bool]) -> pd.DataFrame:
    names = list(KINDS)
    blank = [None] * len(names)
    return pd.DataFrame(
        {
            NAME: names,
            KIND: [KINDS[name] for name in names],
            SKIP: [skip.get(name, name == "customer_id") for name in names],  # as prefilled, unless changed
            LOW: pd.Series(blank, dtype="float64"),
            HIGH: pd.Series(blank, dtype="float64"),
            LEVELS: pd.Series(blank, dtype="object"),
            LOG1P: [False] * len(names),
        }
    )


def test_the_prefilled_table_declares_nothing_and_unticking_an_identifier_keeps_it() -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"customer_id": np.arange(300.0), "paid": rng.exponential(size=300)})
    frame["spend"] = 3 * frame["paid"] + rng.normal(size=300)
    schema, errors = declared_schema(table({}), KINDS)
    assert errors == [] and schema is not None and schema.names == ()  # the package's own rule applies
    default = from_frame(frame, target="spend", task="ridge", schema=schema, noise_seed=0)
    assert default.feature_names == ("paid",)
    schema, _ = declared_schema(table({"customer_id": False}), KINDS)
    assert schema is not None and schema.names == ("customer_id",) and schema.column("customer_id").read
    kept = from_frame(frame, target="spend", task="ridge", schema=schema, noise_seed=0)
    assert kept.feature_names == ("customer_id", "paid")
    schema, _ = declared_schema(table({"paid": True}), KINDS)
    assert schema is not None and not schema.column("paid").read  # any other column: ticked is "do not read"
