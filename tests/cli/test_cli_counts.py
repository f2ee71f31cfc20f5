"""``python -m accfirst counts``: files, the package's rows, counts from a table, exit codes."""

from __future__ import annotations

import pandas as pd
import pytest

from accfirst.accounting.counts import compare_counts, log_uniform_counts
from accfirst.cli import main


def test_synthetic_counts_write_the_results_and_the_report(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["counts", "--synthetic", "300", "--rel-error", "0.1", "--seed", "3", "--out", str(out)]) == 0
    results = pd.read_csv(out / "results.csv")
    reference = compare_counts(log_uniform_counts(300, rng=3), 0.1, 1.0, 1e-6, seed=3)
    assert list(results.columns) == list(reference.columns)
    pd.testing.assert_series_equal(results["rho"], reference["rho"], rtol=1e-12)
    assert set(results["method"]) == {"nr", "doubling"}
    report = (out / "report.html").read_text(encoding="utf-8")
    assert report.startswith("<!doctype html>") and report.count("Plotly.newPlot") == 3
    assert "derived, consistent with Rogers et al. 2023" in report and "δ = 1e-06" in report
    printed = capsys.readouterr().out
    assert "certified" in printed and "results.csv" in printed


def test_counts_from_a_table_by_category_and_by_bin(tmp_path, capsys):
    table = pd.DataFrame({"kind": ["a"] * 5000 + ["b"] * 20000 + ["c"] * 10, "x": range(25010)})
    table.to_csv(tmp_path / "t.csv", index=False)
    out = tmp_path / "o"
    argv = ["counts", "--csv", str(tmp_path / "t.csv"), "--column", "kind", "--rel-error", "0.1", "--out", str(out)]
    assert main([*argv, "--methods", "nr"]) == 0
    results = pd.read_csv(out / "results.csv")
    assert list(results["label"]) == ["a", "b", "c"] and list(results["count"]) == [5000, 20000, 10]
    assert "category list read from the data: not private" in (out / "report.html").read_text(encoding="utf-8")
    assert main([*argv, "--categories", "b,z"]) == 0
    assert list(pd.read_csv(out / "results.csv", keep_default_na=False)["label"][:2]) == ["b", "z"]
    argv[argv.index("kind")] = "x"
    assert main([*argv, "--bins", "4", "--range", "0:25010"]) == 0
    results = pd.read_csv(out / "results.csv")
    assert results.loc[results["method"] == "nr", "count"].sum() == 25010


def test_counts_take_the_categories_and_the_range_from_a_schema(tmp_path):
    table = pd.DataFrame({"kind": ["a"] * 3000 + ["b"] * 6000, "x": range(9000)})
    table.to_csv(tmp_path / "t.csv", index=False)
    schema = tmp_path / "schema.json"
    schema.write_text('{"columns": {"kind": {"levels": ["b", "a", "z"]}, "x": {"range": [0, 9000]}}}', encoding="utf-8")
    out = tmp_path / "o"
    common = ["counts", "--csv", str(tmp_path / "t.csv"), "--rel-error", "0.1", "--schema", str(schema)]
    assert main([*common, "--column", "kind", "--methods", "nr", "--out", str(out)]) == 0
    results = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert list(results["label"]) == ["b", "a", "z"] and list(results["count"]) == [6000, 3000, 0]
    assert "read from the data" not in (out / "report.html").read_text(encoding="utf-8")
    assert main([*common, "--column", "x", "--bins", "3", "--methods", "nr", "--out", str(out)]) == 0
    assert list(pd.read_csv(out / "results.csv")["count"]) == [3000, 3000, 3000]
    assert "read from the data" not in (out / "report.html").read_text(encoding="utf-8")


BAD_OPTIONS = [
    (["--synthetic", "10"], "--rel-error"),
    (["--synthetic", "10", "--rel-error", "0"], "rel_error must be > 0"),
    (["--synthetic", "10", "--rel-error", "0.1", "--cap", "2"], "cap"),
    (["--synthetic", "10", "--rel-error", "0.1", "--delta", "0"], "delta"),
    (["--synthetic", "10", "--rel-error", "0.1", "--methods", "nr,halving"], "methods must be"),
    (["--synthetic", "0", "--rel-error", "0.1"], "--synthetic must be at least 1"),
    (["--synthetic", "10", "--rel-error", "0.1", "--column", "x"], "--column only applies with --csv"),
    (["--synthetic", "10", "--rel-error", "0.1", "--schema", "s.json"], "--schema only applies with --csv"),
    (["--csv", "t.csv", "--column", "x", "--rel-error", "0.1", "--schema", "none.json"], "cannot read the schema"),
    (["--csv", "t.csv", "--rel-error", "0.1"], "--csv needs --column"),
    (["--csv", "t.csv", "--column", "nope", "--rel-error", "0.1"], "not a column of t.csv"),
    (["--csv", "t.csv", "--column", "x", "--rel-error", "0.1", "--bins", "3", "--categories", "a"], "do not go"),
    (["--csv", "t.csv", "--column", "x", "--rel-error", "0.1", "--range", "0:1"], "--range only applies"),
    (["--csv", "t.csv", "--column", "x", "--rel-error", "0.1", "--bins", "3", "--range", "a:b"], "LOW:HIGH"),
    (["--csv", "t.csv", "--column", "x", "--rel-error", "0.1", "--bins", "3", "--range", "5:1"], "low < high"),
]


@pytest.mark.parametrize(("argv", "message"), BAD_OPTIONS)
def test_bad_options_give_one_line_and_exit_2(argv, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    pd.DataFrame({"x": [1.0, 2.0, 3.0]}).to_csv("t.csv", index=False)
    with pytest.raises(SystemExit) as exit_info:
        main(["counts", *argv, "--out", str(tmp_path / "o")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("accfirst: error: ") and message in err[-1]
    assert not (tmp_path / "o" / "results.csv").exists()
