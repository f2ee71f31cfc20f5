"""A corpus of odd and malformed uploads: each gives a correct dataset or a specific ``DataError``.

Every case goes through ``read_upload`` then ``from_frame``, as the app does. A case
expects either a message substring (matched against the ``DataError``) or a check
function with assertions on the prepared arrays and report. Any other exception fails.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest

from accfirst.datasets import PreparedData, UploadLimits, from_frame, read_upload
from accfirst.errors import DataError
from tests.datasets.dataset_checks import LEGACY, assert_spec

N = 40


def _base(seed: int = 0, n: int = N) -> pd.DataFrame:
    """x1, x2 numeric features; y a numeric target; label a yes/no target."""
    rng = np.random.default_rng(seed)
    x1 = np.round(rng.uniform(0, 10, n), 3)
    x2 = np.round(rng.normal(0, 2, n), 3)
    y = np.round(2 * x1 - x2 + rng.normal(0, 1, n), 3)
    label = np.where(x1 + rng.normal(0, 2, n) > 5, "yes", "no")
    return pd.DataFrame({"x1": x1, "x2": x2, "y": y, "label": label})


def _csv(frame: pd.DataFrame, sep: str = ",", **kwargs: object) -> bytes:
    return frame.to_csv(index=False, sep=sep, lineterminator="\n", **kwargs).encode("utf-8")


def _parquet(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def _original_rows(frame: pd.DataFrame, columns: list[str]) -> set[tuple[float, ...]]:
    return {tuple(np.round(row, 6)) for row in frame[columns].to_numpy(dtype=float)}


def _recovered_training_rows(prepared: PreparedData) -> list[tuple[float, ...]]:
    return [tuple(np.round(row, 6)) for row in prepared.X_train * prepared.report.feature_scale]


def _rows_are(frame: pd.DataFrame, columns: list[str], usable: int) -> Callable[[PreparedData], None]:
    """Training rows times the scale are rows of ``frame``; train + test = ``usable`` rows."""

    def check(prepared: PreparedData) -> None:
        assert list(prepared.feature_names) == columns
        assert prepared.report.n_train + prepared.report.n_test == usable
        assert set(_recovered_training_rows(prepared)) <= _original_rows(frame, columns)

    return check


def _all(*checks: Callable[[PreparedData], None]) -> Callable[[PreparedData], None]:
    def check(prepared: PreparedData) -> None:
        for one in checks:
            one(prepared)

    return check


def _step_contains(text: str) -> Callable[[PreparedData], None]:
    def check(prepared: PreparedData) -> None:
        assert any(text in step for step in prepared.report.steps), prepared.report.steps

    return check


def _dropped(name: str, reason: str) -> Callable[[PreparedData], None]:
    def check(prepared: PreparedData) -> None:
        reasons = dict(prepared.report.dropped_columns)
        assert name in reasons and reason in reasons[name], prepared.report.dropped_columns
        assert name not in prepared.feature_names

    return check


def _labels(positive: object, n_positive: int) -> Callable[[PreparedData], None]:
    def check(prepared: PreparedData) -> None:
        assert prepared.report.positive_class == positive
        y = np.concatenate([prepared.y_train, prepared.y_test])
        assert int((y == 1).sum()) == n_positive

    return check


@dataclass(frozen=True)
class Case:
    name: str
    data: bytes
    filename: str = "data.csv"
    options: dict = field(default_factory=lambda: {"target": "y", "task": "ridge"})
    error: str = ""
    check: Callable[[PreparedData], None] | None = None
    limits: UploadLimits = field(default_factory=UploadLimits)


BASE = _base()
NUMERIC = ["x1", "x2"]
RIDGE = {"target": "y", "task": "ridge"}
YES_NO = {"target": "label", "task": "logistic"}


def _semicolon_decimal_comma() -> bytes:
    return BASE.to_csv(index=False, sep=";", decimal=",", lineterminator="\n").encode()


def _many_nans() -> tuple[bytes, pd.DataFrame, int]:
    rng = np.random.default_rng(3)
    n = 5000
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "sparse": np.nan, "y": rng.normal(size=n)})
    frame.loc[::7, "b"] = np.nan
    frame.loc[:9, "sparse"] = 1.0 + np.arange(10)
    dropped_rows = len(range(0, n, 7))
    return _csv(frame), frame, n - dropped_rows


def _infinities() -> tuple[bytes, int]:
    lines = ["a,b,y"] + [f"{i % 5},{i % 3},{i}" for i in range(N)]
    lines[3] = "inf,1,2"
    lines[8] = "1,-inf,5"
    lines[12] = "2,3,Infinity"
    return ("\n".join(lines) + "\n").encode(), N - 3


def _three_classes() -> pd.DataFrame:
    frame = BASE.copy()
    frame["species"] = np.array(["setosa", "versicolor", "virginica"])[np.arange(N) % 3]
    return frame


def _wide(columns: int, rows: int = N) -> bytes:
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(rng.normal(size=(rows, columns)), columns=[f"c{j}" for j in range(columns)])
    frame["y"] = rng.normal(size=rows)
    return _csv(frame)


def _row_index_file(name: str | None = None) -> bytes:
    return BASE[["x1", "x2", "y"]].rename_axis(name).to_csv(lineterminator="\n").encode()


MANY_NANS, MANY_NANS_FRAME, MANY_NANS_USABLE = _many_nans()
INFINITIES, INFINITIES_USABLE = _infinities()
THREE = _three_classes()
UNICODE = BASE.rename(columns={"x1": "température", "x2": "poids (kg) 😀", "y": "目标"})
BOOL = BASE.assign(flag=BASE["label"] == "yes")
TEXT_IN_QUOTES = BASE.assign(note=['a, b\nc "quoted"' if i % 2 else "plain" for i in range(N)])
WITH_MARKERS = BASE[["x1", "x2", "y"]].astype(object)
WITH_MARKERS.loc[[2, 5], "x2"] = "?"
WITH_MARKERS.loc[9, "x1"] = " n/a "

CASES = [
    Case("comma", _csv(BASE), check=_rows_are(BASE, NUMERIC, N)),
    Case(
        "semicolon_decimal_comma",
        _semicolon_decimal_comma(),
        check=_all(_rows_are(BASE, NUMERIC, N), _step_contains("decimal comma"), _step_contains("semicolon")),
    ),
    Case("tab", _csv(BASE, sep="\t"), "data.tsv", check=_all(_rows_are(BASE, NUMERIC, N), _step_contains("tab"))),
    Case("pipe", _csv(BASE, sep="|"), check=_rows_are(BASE, NUMERIC, N)),
    Case(
        "utf8_bom",
        b"\xef\xbb\xbf" + _csv(BASE),
        check=_all(_rows_are(BASE, NUMERIC, N), _step_contains("byte-order mark")),
    ),
    Case("bom_semicolon", b"\xef\xbb\xbf" + _semicolon_decimal_comma(), check=_rows_are(BASE, NUMERIC, N)),
    Case("quoted_numbers", _csv(BASE, quoting=1), check=_rows_are(BASE, NUMERIC, N)),
    Case("crlf_line_endings", _csv(BASE).replace(b"\n", b"\r\n"), check=_rows_are(BASE, NUMERIC, N)),
    Case(
        "quoted_text_with_delimiter_and_newline",
        _csv(TEXT_IN_QUOTES),
        check=_all(_rows_are(BASE, NUMERIC, N), _dropped("note", "not numeric")),
    ),
    Case(
        "spaces_around_values_and_names",
        b"x1 , x2 ,y\n" + b"\n".join(f" {a} , {b} ,{c}".encode() for a, b, c in BASE[["x1", "x2", "y"]].to_numpy()),
        check=_rows_are(BASE, NUMERIC, N),
    ),
    Case(
        "thousands_of_nans",
        MANY_NANS,
        check=_all(
            _rows_are(MANY_NANS_FRAME, ["a", "b"], MANY_NANS_USABLE),
            _dropped("sparse", "100% of its values are missing"),
            lambda p: p.report.rows_dropped_missing == 5000 - MANY_NANS_USABLE,
        ),
    ),
    Case(
        "plus_minus_infinity",
        INFINITIES,
        options={"target": "y", "task": "ridge"},
        check=_all(
            lambda p: p.report.n_train + p.report.n_test == INFINITIES_USABLE,
            lambda p: p.report.rows_dropped_missing == 3,
            _step_contains("dropped 3 of 40 rows"),
        ),
    ),
    Case(
        "missing_value_markers",
        _csv(WITH_MARKERS),
        check=_all(
            _step_contains("column 'x2': 2 value(s) such as '?' read as missing"),
            _step_contains("column 'x1': 1 value(s) such as 'n/a' read as missing"),
            lambda p: p.report.rows_dropped_missing == 3,
        ),
    ),
    Case("yes_no_labels", _csv(BASE), options=YES_NO, check=_labels("yes", int((BASE["label"] == "yes").sum()))),
    Case(
        "text_labels_chosen_positive",
        _csv(BASE),
        options={**YES_NO, "positive_class": "no"},
        check=_labels("no", int((BASE["label"] == "no").sum())),
    ),
    Case(
        "three_classes_without_positive",
        _csv(THREE),
        options={"target": "species", "task": "logistic"},
        error="has 3 classes ('setosa', 'versicolor', 'virginica'); choose the positive class",
    ),
    Case(
        "three_classes_with_positive",
        _csv(THREE),
        options={"target": "species", "task": "logistic", "positive_class": "virginica"},
        check=_all(_labels("virginica", N // 3), _dropped("label", "not numeric")),
    ),
    Case(
        "positive_class_as_numpy_scalar",
        _csv(BOOL.assign(flag=BOOL["flag"].astype(int))),
        options={"target": "flag", "task": "logistic", "positive_class": np.int64(0)},
        check=_labels(0.0, int((~BOOL["flag"]).sum())),
    ),
    Case(
        "positive_class_with_spaces",
        _csv(BASE),
        options={**YES_NO, "positive_class": " no "},
        check=_labels("no", int((BASE["label"] == "no").sum())),
    ),
    Case(
        "unknown_positive_class",
        _csv(BASE),
        options={**YES_NO, "positive_class": "maybe"},
        error="positive class 'maybe' is not a value of target column 'label'",
    ),
    Case(
        "bool_labels",
        _csv(BOOL),
        options={"target": "flag", "task": "logistic"},
        check=_labels("True", int(BOOL["flag"].sum())),
    ),
    Case(
        "zero_one_labels",
        _csv(BOOL.assign(flag=BOOL["flag"].astype(int))),
        options={"target": "flag", "task": "logistic"},
        check=_labels(1.0, int(BOOL["flag"].sum())),
    ),
    Case("constant_target", _csv(BASE.assign(y=3.0)), error="target column 'y' has only one value (3)"),
    Case(
        "single_class",
        _csv(BASE.assign(label="yes")),
        options=YES_NO,
        error="target column 'label' has only one class (yes)",
    ),
    Case(
        "text_target_for_ridge",
        _csv(BASE),
        options={"target": "label", "task": "ridge"},
        error="target column 'label' is not numeric (it has values such as 'yes')",
    ),
    Case(
        "missing_target_column",
        _csv(BASE),
        options={"target": "price", "task": "ridge"},
        error="target column 'price' is not in the data; the columns are: 'x1', 'x2', 'y', 'label'",
    ),
    Case("single_row", _csv(BASE.head(1)), error="has only 1 data row; at least 20 are needed"),
    Case("nineteen_rows", _csv(BASE.head(19)), error="has only 19 data rows; at least 20 are needed"),
    Case(
        "too_few_rows_after_gaps",
        _csv(BASE.assign(x2=np.where(np.arange(N) < 25, np.nan, BASE["x2"]))),
        options={**RIDGE, "features": ["x1", "x2"]},
        error="only 15 usable rows after dropping 25 with missing values",
    ),
    Case("header_only", b"x1,x2,y\n", error="has a header row but no data rows"),
    Case("empty_file", b"", error="'data.csv' is empty (0 bytes)"),
    Case("blank_lines_only", b"\n\r\n   \n", error="contains only blank lines"),
    Case(
        "binary_junk",
        bytes(np.random.default_rng(7).integers(0, 256, 4096, dtype=np.uint8)),
        error="looks like a binary file",
    ),
    Case("utf16_text", _csv(BASE).decode().encode("utf-16"), error="looks like a binary file (or UTF-16 text)"),
    Case(
        "latin1_text",
        "x1,x2,y,é\n".encode("latin-1") + _csv(BASE[["x1", "x2", "y", "label"]], header=False),
        error="'data.csv' is not UTF-8 text (byte 8 cannot be decoded)",
    ),
    Case("duplicate_headers", b"x1,x2,x1,y\n" + b"1,2,3,4\n" * N, error="repeated column names: 'x1' (2 times)"),
    Case(
        "duplicate_headers_after_trimming",
        b"x1, x1 ,y\n" + b"1,2,3\n" * N,
        error="repeated column names: 'x1' (2 times)",
    ),
    Case(
        "unicode_headers",
        _csv(UNICODE),
        options={"target": "目标", "task": "ridge"},
        check=_rows_are(UNICODE, ["température", "poids (kg) 😀"], N),
    ),
    Case("wide_over_column_limit", _wide(500), error="has 501 columns; the limit is 500"),
    Case("wide_within_limit", _wide(300), check=lambda p: p.X_train.shape == (32, 300)),
    Case("more_rows_than_limit", _csv(BASE), limits=UploadLimits(max_rows=30), error="more than 30 data rows"),
    Case("larger_than_size_limit", _csv(BASE), limits=UploadLimits(max_bytes=100), error="MB; the limit is 0 MB"),
    Case(
        "ragged_rows",
        b"x1,x2,y\n" + b"1,2,3\n" * 5 + b"1,2,3,4\n" + b"1,2,3\n" * N,
        error="Expected 3 fields in line 7, saw 4",
    ),
    Case(
        "no_numeric_features",
        _csv(BASE[["label", "y"]].assign(city="Paris")),
        error="no numeric feature columns to use besides the target 'y' ('label': not numeric",
    ),
    Case("only_the_target", _csv(BASE[["y"]]), error="the table has no columns besides the target 'y'"),
    Case(
        "every_row_has_a_gap",
        b"x1,x2,y\n" + b"".join(b"%d,,%d\n,%d,1\n" % (i, i, i) for i in range(N)),
        error="every row has a missing or infinite value",
    ),
    Case("constant_feature", _csv(BASE.assign(x3=7.0)), check=_dropped("x3", "constant (every value is 7)")),
    Case("pandas_row_index", _row_index_file(), check=_dropped("Unnamed: 0", "an identifier (by its name")),
    Case("row_numbers", _row_index_file("n"), check=_dropped("n", "looks like a row number")),
    Case(
        "thousands_separators",
        _csv(BASE.assign(amount=[f"{1000 + i:,}" for i in range(N)])),
        check=_dropped("amount", "not numeric (it has values such as '1,000')"),
    ),
    Case("parquet", _parquet(BASE), "data.parquet", check=_all(_rows_are(BASE, NUMERIC, N), _step_contains("Parquet"))),
    Case("parquet_name_but_csv", _csv(BASE), "data.parquet", error="is named like a Parquet file but is not one"),
    Case("truncated_parquet", _parquet(BASE)[:200], "data.parquet", error="could not read 'data.parquet' as Parquet"),
    Case(
        "negative_values_for_log1p",
        _csv(BASE),
        options={**RIDGE, "log1p_columns": ["x2"]},
        error="column 'x2' has negative values",
    ),
    Case(
        "clip_without_bound",
        _csv(BASE),
        options={**RIDGE, "scaling": "clip"},
        error="scaling 'clip' needs feature_bound",
    ),
]


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 20
    assert len({case.name for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_upload_corpus(case: Case) -> None:
    """Under the legacy options, so that the checks can recover raw rows from prepared ones."""
    options = {**LEGACY, **case.options}
    if case.error:
        with pytest.raises(DataError) as caught:
            from_frame(read_upload(case.data, case.filename, limits=case.limits), **options, limits=case.limits)
        assert case.error in str(caught.value)
        return
    prepared = from_frame(read_upload(case.data, case.filename, limits=case.limits), **options, limits=case.limits)
    assert_spec(prepared)
    assert case.check is not None
    assert case.check(prepared) in (None, True)


def _mutations(seed: int, count: int) -> list[bytes]:
    """Random damage to a valid CSV: flipped bytes, cuts, inserted delimiters, quotes and line breaks."""
    rng = np.random.default_rng(seed)
    original = bytearray(_csv(BASE))
    inserts = [b",", b";", b"\t", b'"', b"\n", b"\r", b"\x00", b"\xff", b"nan", b"-", b"e"]
    damaged = []
    for _ in range(count):
        data = bytearray(original)
        for _ in range(rng.integers(1, 6)):
            where = int(rng.integers(0, len(data)))
            action = rng.integers(0, 3)
            if action == 0:
                data[where] = int(rng.integers(0, 256))
            elif action == 1:
                data[where:] = data[where : where + int(rng.integers(0, 400))]
            else:
                data[where:where] = inserts[int(rng.integers(0, len(inserts)))]
        damaged.append(bytes(data))
    return damaged


@pytest.mark.parametrize("preparation", ["private", "evaluation"])
@pytest.mark.parametrize("task", ["ridge", "logistic"])
def test_damaged_files_give_a_dataset_or_a_data_error(task: str, preparation: str) -> None:
    options = RIDGE if task == "ridge" else {**YES_NO, "positive_class": "yes"}
    outcomes = {"prepared": 0, "error": 0}
    for data in _mutations(11 if task == "ridge" else 12, 150):
        try:
            prepared = from_frame(read_upload(data, "damaged.csv"), **options, preparation=preparation, noise_seed=0)
        except DataError as error:
            assert str(error)
            outcomes["error"] += 1
            continue
        assert_spec(prepared)
        outcomes["prepared"] += 1
    assert outcomes["prepared"] > 0 and outcomes["error"] > 0


def test_read_upload_accepts_bytes_like_and_rejects_text() -> None:
    data = _csv(BASE)
    for payload in (data, bytearray(data), memoryview(data)):
        frame = read_upload(payload, "data.csv")
        assert frame.shape == (N, 4) and list(frame.columns) == ["x1", "x2", "y", "label"]
    with pytest.raises(TypeError, match="data must be the file's bytes; got str"):
        read_upload(data.decode(), "data.csv")


def test_upload_limits_must_be_positive_whole_numbers() -> None:
    with pytest.raises(DataError, match="upload limit max_rows must be a whole number ≥ 1; got 0"):
        UploadLimits(max_rows=0)
