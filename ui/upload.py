"""An upload's preparation: declared metadata in an editable table, the mode and its budget, the prepared data.

After an upload the sidebar asks for the target, the task and, for logistic regression, the
positive class (typed, never picked from the data's values), then how to prepare the table:
privately (the default: what is declared costs nothing, the rest is estimated under ε_prep) or
"evaluation only", which reads the data. The table of declared metadata lists the columns by name
and type only — nothing read from their values — and what a visitor types there is checked by the
package (``Schema``, ``ColumnSpec``); its errors are shown as plain text under the table.

A private preparation is a release: every preparation with fresh noise costs ε_prep again. So the
prepared data are kept in this session, and each set of choices gets its own secret noise seed
(drawn once from the operating system, kept in the session, never shown): a rerun, or a return
to choices made before, gives back the same release instead of a new one. Nothing of an upload
leaves the session: no shared cache, no disk, no worker.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import pandas as pd
import streamlit as st

from accfirst.datasets import ColumnSpec, PreparedData, Schema, UploadLimits, from_frame
from accfirst.datasets.columns import column_kind, guess_task, quoted
from accfirst.datasets.prepare.budget import DEFAULT_TABLE_BUDGET, PREP_SHARE
from accfirst.datasets.prepare.identifiers import looks_like_identifier
from accfirst.datasets.prepared import EVALUATION_MODE, EXCLUDES_PREPARATION, PREPARATIONS, PRIVATE_MODE, TASKS
from accfirst.datasets.preprocess import DEFAULT_MAX_LEVELS, MISSING_CHOICES, SCALINGS
from accfirst.errors import DataError
from ui.cache import SECRETS, memoised, session_memo, session_secret
from ui.text import EVALUATION_LABEL, plain

MODE_LABELS = {
    PRIVATE_MODE: "private: declared metadata, private estimates for the rest (default)",
    EVALUATION_MODE: EVALUATION_LABEL,
}
TASK_LABELS = {"ridge": "ridge regression (numeric target)", "logistic": "logistic regression (two classes)"}
MISSING_LABELS = {
    "impute": "the private mean",
    "median": "a private median (charged)",
    "centre": "the centre of the range (free)",
}
EVALUATION_MISSING_LABELS = {"impute": "fill (training median / most frequent)", "drop": "drop the row"}
STANDARDIZE_LABELS = {
    "half-range": "by half the range (free)",
    "private": "by a private standard deviation",
    "none": "no",
}
SCALING_LABELS = {
    "ranges": "divide by the sum of the columns' half-ranges (reads nothing more)",
    "paper": "as in the paper: divide by the data's largest row norm (reads the data)",
    "clip": "divide by public bounds I state, then clip",
}
# The editable table's columns: the name (fixed), then what may be declared about it.
NAME, KIND, SKIP, LOW, HIGH, LEVELS, LOG1P = "column", "type", "do not read", "low", "high", "levels", "log(1 + x)"


def upload_options(sidebar: Any, frame: pd.DataFrame, digest: str) -> dict[str, Any] | None:
    """The ``from_frame`` options a visitor chose for an upload, or ``None`` while the declared metadata has errors.

    Widget keys carry the file's hash, so a new file starts afresh.
    """
    prefix = f"app.upload.{digest[:12]}"
    columns = [str(c) for c in frame.columns]
    target = sidebar.selectbox("Column to predict (target)", columns, index=len(columns) - 1, key=f"{prefix}.target")
    guessed = guess_task(frame[frame.columns[columns.index(target)]])
    task = sidebar.radio(
        "Task",
        TASKS,
        index=TASKS.index(guessed),
        key=f"{prefix}.task.{target}",
        format_func=TASK_LABELS.get,
        horizontal=True,
    )
    options: dict[str, Any] = {"target": target, "task": task}
    if task == "logistic":
        positive = sidebar.text_input(
            "Positive class (+1), as written in the file",
            key=f"{prefix}.positive.{target}",
            placeholder="e.g. yes, 1, malignant",
            help="Rows whose target is this value are +1, every other value −1. Typed, not picked from a list: a list "
            "of the classes would read them from the data.",
        )
        if positive.strip():
            options["positive_class"] = positive.strip()
    mode = sidebar.radio("Preparation", PREPARATIONS, format_func=MODE_LABELS.get, key=f"{prefix}.mode")
    options["preparation"] = mode
    if mode == PRIVATE_MODE:
        budget = sidebar.number_input(
            "Preparation budget ε_prep (blank: automatic)",
            value=None,
            min_value=0.0,
            step=None,
            format="%g",
            placeholder=f"automatic: at most {PREP_SHARE:.0%} of ε = {DEFAULT_TABLE_BUDGET:g}",
            key=f"{prefix}.prep_epsilon",
            help="The ε the private steps share; paid once for the table and added to every ε shown on it. "
            f"Automatic: what the statistics need (150 × the steps' weight / n), at most {PREP_SHARE:.0%} of a "
            f"table's budget of ε = {DEFAULT_TABLE_BUDGET:g}. A new choice prepares the table again: a new release, "
            "paid again.",
        )
        if budget is not None:
            options["prep_epsilon"] = float(budget)
    else:
        sidebar.warning(
            f"Medians, frequent levels, means, spreads and the largest row are read from the data. Every ε shown "
            f"{EXCLUDES_PREPARATION}.",
            icon="⚠️",
        )
    schema = _metadata_table(sidebar, frame, prefix)
    with sidebar.expander("More preparation choices", expanded=False):
        options.update(_more_choices(mode, task, f"{prefix}.{mode}"))
    if schema is None:
        return None
    if schema.columns:
        options["schema"] = schema
    return options


def _kinds(frame: pd.DataFrame) -> dict[str, str | None]:
    """Each column's type as the file gives it (numbers, text or neither): types only, no statistic."""
    return {str(name): column_kind(frame[name]) for name in frame.columns}


def _metadata_table(sidebar: Any, frame: pd.DataFrame, prefix: str) -> Schema | None:
    """The editable table of declared metadata, and the ``Schema`` it declares (``None``: errors, shown)."""
    kinds = session_memo("upload_kinds", prefix, lambda: _kinds(frame), max_entries=1)
    names = list(kinds)
    blank = [None] * len(names)
    table = pd.DataFrame(
        {
            NAME: names,
            KIND: [kinds[name] for name in names],
            SKIP: [looks_like_identifier(name) for name in names],
            LOW: pd.Series(blank, dtype="float64"),
            HIGH: pd.Series(blank, dtype="float64"),
            LEVELS: pd.Series(blank, dtype="object"),
            LOG1P: [False] * len(names),
        }
    )
    with sidebar.expander("Declared metadata (public: costs no privacy)", expanded=True):
        st.caption(
            "What you know without looking at the data: a column's range, its text levels, a column not to read. "
            "A column with a declared range costs no ε. Whatever you leave blank is estimated privately (or read, "
            "evaluation only)."
        )
        edited = st.data_editor(
            table,
            key=f"{prefix}.schema",
            hide_index=True,
            disabled=[NAME],
            num_rows="fixed",
            column_config={
                NAME: st.column_config.TextColumn(NAME, help="The column's name in the file.", pinned=True),
                KIND: st.column_config.SelectboxColumn(
                    KIND,
                    options=["numeric", "text"],
                    help="As the file gives it (shown to you only). Left so, the private preparation decides it "
                    "with a charged noisy count; changed, it is declared. 'text' reads codes as levels.",
                ),
                SKIP: st.column_config.CheckboxColumn(
                    SKIP,
                    help="Leave the column out (an identifier, a note). Ticked for a name that reads as an identifier "
                    "(customer_id, ID, …): untick it to use that column as a feature.",
                ),
                LOW: st.column_config.NumberColumn(LOW, help="A public lower bound, in the column's own units."),
                HIGH: st.column_config.NumberColumn(HIGH, help="A public upper bound: values outside are clipped."),
                LEVELS: st.column_config.TextColumn(
                    LEVELS, help="Text levels, separated by commas: one 0/1 column each."
                ),
                LOG1P: st.column_config.CheckboxColumn(LOG1P, help="For counts and other heavy-tailed values ≥ 0."),
            },
        )
        schema, errors = declared_schema(edited, kinds)
        for error in errors:
            st.error(plain(error))
    return schema


def _number(value: object) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def declared_schema(edited: pd.DataFrame, kinds: dict[str, str | None]) -> tuple[Schema | None, list[str]]:
    """The ``Schema`` the edited table declares, or ``None`` and the package's messages for what it refuses.

    A type equal to the file's own is not a declaration; a blank range or levels cell declares nothing; nor does
    "do not read" as prefilled (ticked for a name that reads as an identifier), while unticking it there keeps the
    column.
    """
    specs: list[tuple[str, ColumnSpec]] = []
    errors: list[str] = []
    for row in edited.to_dict("records"):
        name = str(row[NAME])
        low, high = _number(row[LOW]), _number(row[HIGH])
        levels = str(row[LEVELS] or "").strip()
        declared = {
            "kind": row[KIND] if row[KIND] != kinds.get(name) else None,
            "range": None if low is None and high is None else (low, high),
            "levels": tuple(level.strip() for level in levels.split(",")) if levels else None,
            "read": not row[SKIP],
            "log1p": bool(row[LOG1P]),
        }
        default_read = not looks_like_identifier(name)
        if declared == {"kind": None, "range": None, "levels": None, "read": default_read, "log1p": False}:
            continue
        try:
            specs.append((name, ColumnSpec(where=f"column {quoted(name)}", **declared)))
        except DataError as error:
            errors.append(str(error))
    return (None, errors) if errors else (Schema(tuple(specs)), [])


def _more_choices(mode: str, task: str, prefix: str) -> dict[str, Any]:
    """Gaps, text levels, centring, standardising and scaling, with the choices the package allows in ``mode``."""
    private = mode == PRIVATE_MODE
    options: dict[str, Any] = {
        "missing": st.radio(
            "A missing value takes",
            MISSING_CHOICES[mode],
            key=f"{prefix}.missing",
            format_func=(MISSING_LABELS if private else EVALUATION_MISSING_LABELS).get,
        ),
        "max_levels": int(
            st.number_input(
                "Most 0/1 columns per text column (0: leave text columns out)",
                min_value=0,
                max_value=200,
                value=DEFAULT_MAX_LEVELS,
                key=f"{prefix}.max_levels",
            )
        ),
        "center": st.checkbox("Centre the columns (the models have no intercept)", value=True, key=f"{prefix}.center"),
    }
    if private:
        standardize = st.radio(
            "Divide numeric columns",
            tuple(STANDARDIZE_LABELS),
            key=f"{prefix}.standardize",
            format_func=STANDARDIZE_LABELS.get,
        )
        options["standardize"] = False if standardize == "none" else standardize
    else:
        options["standardize"] = st.checkbox(
            "Divide numeric columns by their standard deviations", value=True, key=f"{prefix}.standardize"
        )
    scaling = st.radio(
        "Scaling into the unit ball", SCALINGS[mode], key=f"{prefix}.scaling", format_func=SCALING_LABELS.get
    )
    options["scaling"] = scaling
    if scaling == "clip":
        options["feature_bound"] = st.number_input(
            "Public bound on a row's ℓ1 norm", min_value=1e-9, value=1.0, format="%g", key=f"{prefix}.feature_bound"
        )
        if task == "ridge":
            bound = st.number_input(
                "Public bound on |target| (blank: its range)" if private else "Public bound on |target|",
                min_value=1e-9,
                value=None if private else 1.0,
                format="%g",
                key=f"{prefix}.target_bound",
            )
            if bound is not None:
                options["target_bound"] = bound
    return options


def prepared_upload(frame: pd.DataFrame, digest: str, options: dict[str, Any], limits: UploadLimits) -> PreparedData:
    """The upload prepared with ``options``, kept in this session (one release per set of choices).

    A private preparation draws its noise from a secret seed kept per choices in this session, so
    that the same choices give back the same release (never a second one, which would cost ε_prep
    again); the seed is never shown.
    """
    key = choices_key(digest, options)
    noise = {"noise_seed": session_secret(key)} if options["preparation"] == PRIVATE_MODE else {}
    return session_memo(
        "upload_prepared", key, lambda: from_frame(frame, limits=limits, **options, **noise), max_entries=1
    )


def prepared_before(digest: str, options: dict[str, Any]) -> bool:
    """Whether these choices were prepared privately before in this session: preparing them again repeats that release
    (the same secret noise), so it spends nothing new."""
    return memoised(SECRETS, choices_key(digest, options))


def choices_key(digest: str, options: dict[str, Any]) -> tuple[Hashable, ...]:
    """A hashable identity of an upload's preparation: the file's hash and every choice."""
    return (digest, *sorted(options.items()))
