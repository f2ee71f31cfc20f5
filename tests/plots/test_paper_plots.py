"""The paper's figures, table and report on small hand-made frames (accfirst.plots.paper)."""

from __future__ import annotations

import html
import math
import re

import numpy as np
import pandas as pd
import pytest

from accfirst.interpret import quantile_with_inf
from accfirst.methods.base import Comparison, Method
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.registry import register, unregister
from accfirst.plots.paper import (
    DELTA_CAVEAT,
    calibration_caveat,
    fig1_epsilon,
    fig2_excess_risk,
    fig3_breakdown,
    fig4_theta_norm,
    html_report,
    paper_table,
    report_figures,
    summarise,
)
from accfirst.result import RunResult
from accfirst.search.experiments import COLUMNS

INF = math.inf
M = 14.142135623730951


def frame(rows: list[dict], eps_theory: dict[float, float] | None = None) -> pd.DataFrame:
    """A results frame with every COLUMN; rows give method, alpha, eps_test, eps_hypothesis, …"""
    full = []
    for trial, row in enumerate(rows):
        eps_total = row["eps_test"] + row["eps_hypothesis"]
        full.append(
            {
                "generator": "covariance",
                "calibration": "theorem",
                "gamma": 0.1,
                "lam": 0.005,
                "n": 1000,
                "p": 5,
                "T": 1000,
                "trial": trial,
                "stop_index": None if math.isinf(eps_total) else 3,
                "eps_total": eps_total,
                "exp_eps_total": math.exp(eps_total) if eps_total < 709 else INF,
                "success": True,
                "fallback": math.isinf(eps_total),
                "norm_bound": M,
                "seconds": 0.01,
                "excess_risk": 0.01,
                "theta_norm": 1.0,
                **row,
            }
        )
    df = pd.DataFrame(full, columns=list(COLUMNS))
    if eps_theory is not None:
        df["eps_theory"] = df["alpha"].map(eps_theory)
    return df


def nr(alpha: float, test: float, generation: float, **extra: float) -> dict:
    return {"method": "nr", "alpha": alpha, "eps_test": test, "eps_hypothesis": generation, **extra}


def doubling(alpha: float, test: float, generation: float, **extra: float) -> dict:
    return {"method": "doubling", "alpha": alpha, "eps_test": test, "eps_hypothesis": generation, **extra}


@pytest.fixture
def results() -> pd.DataFrame:
    """Two α, four trials each of NR and doubling; one NR fallback at α = 0.1."""
    rows = [nr(0.05, 2.0, g) for g in (0.1, 0.2, 0.3, 0.4)] + [nr(0.1, 1.0, g) for g in (0.1, 0.2, 0.3, INF)]
    rows += [doubling(0.05, 3.0, g) for g in (1.0, 1.0, 2.0, 2.0)] + [doubling(0.1, 1.5, g) for g in (1, 1, 1, 1)]
    return frame(rows, eps_theory={0.05: 20.0, 0.1: 10.0})


def traces(fig) -> dict:
    return {trace.name: trace for trace in fig.data}


@pytest.mark.parametrize("q", [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0])
def test_quantile_with_inf_is_numpys_on_finite_values(q):
    values = np.random.default_rng(0).exponential(size=17)
    assert quantile_with_inf(values, q) == pytest.approx(np.quantile(values, q), rel=1e-12)


def test_quantile_with_inf_counts_infinity_as_infinity():
    assert quantile_with_inf([1.0, INF], 0.5) == INF  # numpy gives NaN here
    assert quantile_with_inf([INF, INF], 0.5) == INF
    assert quantile_with_inf([1.0, 2.0, INF, INF], 0.25) == pytest.approx(1.75)
    assert quantile_with_inf([1.0, 2.0, 3.0, INF], 0.5) == pytest.approx(2.5)
    assert quantile_with_inf([1.0, 2.0, 3.0, INF], 1.0) == INF
    assert math.isnan(quantile_with_inf([], 0.5))


def test_summarise_keeps_fallbacks(results):
    summary = summarise(results[results["method"] == "nr"], "eps_total").set_index("alpha")
    assert summary.loc[0.05, "q50"] == pytest.approx(2.25)
    assert summary.loc[0.1, "q50"] == pytest.approx(1.25)
    assert summary.loc[0.1, "q75"] == INF  # the fallback run
    assert summary.loc[0.1, "fallback_share"] == 0.25 and summary.loc[0.1, "runs"] == 4


def test_fig1_versus_theory(results):
    fig = fig1_epsilon(results, "theory")
    named = traces(fig)
    assert set(named) == {
        "Noise reduction: median",
        "Noise reduction: interquartile range",
        "Noise reduction: interquartile range (lower edge)",
        "Theory approach E(α): expected error only",
    }
    assert list(named["Noise reduction: median"].y) == pytest.approx([2.25, 1.25])
    # The band's top at α = 0.1 is ∞: left out, not drawn as NaN or a huge number.
    assert list(named["Noise reduction: interquartile range"].y) == [pytest.approx(2.325), None]
    assert list(named["Theory approach E(α): expected error only"].y) == [20.0, 10.0]
    assert "expected" in named["Theory approach E(α): expected error only"].hovertemplate
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text == "ex-post privacy loss ε (log scale)"
    assert fig.layout.yaxis.type == "log"  # the paper's linear axis is flattened by the smallest α
    assert "∞" in fig.layout.title.subtitle.text
    linear = fig1_epsilon(results, "theory", log_axis=False)
    assert linear.layout.yaxis.type == "linear" and linear.layout.yaxis.title.text == "ex-post privacy loss ε"


def test_fig1_theory_curve_from_theory_rows_or_missing(results):
    no_column = results.drop(columns="eps_theory")
    theory_rows = frame(
        [{"method": "theory", "alpha": a, "eps_test": 0.0, "eps_hypothesis": e} for a, e in ((0.05, 20.0), (0.1, 10.0))]
    )
    with_rows = fig1_epsilon(pd.concat([no_column, theory_rows], ignore_index=True), "theory")
    assert list(traces(with_rows)["Theory approach E(α): expected error only"].y) == [20.0, 10.0]
    without = fig1_epsilon(no_column, "theory")
    assert "Theory approach E(α): expected error only" not in traces(without)
    assert "No theory curve" in without.layout.title.subtitle.text


def test_fig1_versus_doubling_in_risk_factor(results):
    fig = fig1_epsilon(results, "doubling", risk_factor=True)
    named = traces(fig)
    assert "Doubling: median" in named and not any(name.startswith("Theory") for name in named)
    assert list(named["Doubling: median"].y) == pytest.approx([math.exp(4.5), math.exp(2.5)])
    assert list(named["Noise reduction: median"].y) == pytest.approx([math.exp(2.25), math.exp(1.25)])
    assert fig.layout.yaxis.type == "log" and "e^ε" in fig.layout.yaxis.title.text


def test_fig1_rejects_unknown_comparison(results):
    with pytest.raises(ValueError, match="versus"):
        fig1_epsilon(results, "oracle")


def test_fig2_has_median_90th_percentile_and_the_alpha_line(results):
    results = results.assign(excess_risk=np.linspace(0.001, 0.016, len(results)))
    fig = fig2_excess_risk(results)
    named = traces(fig)
    line = named["requested accuracy y = α"]
    assert list(line.x) == [0.05, 0.1] and list(line.y) == [0.05, 0.1]
    nr_rows = results[(results["method"] == "nr") & (results["alpha"] == 0.05)]["excess_risk"]
    assert named["Noise reduction: 90th percentile"].y[0] == pytest.approx(np.quantile(nr_rows, 0.9))
    assert named["Noise reduction: median"].y[0] == pytest.approx(np.median(nr_rows))
    assert "Doubling: 90th percentile" in named
    assert fig.layout.yaxis.title.text and fig.layout.xaxis.title.text


def test_fig3_breakdown_uses_halted_runs_and_skips_theory(results):
    theory_rows = frame([{"method": "theory", "alpha": 0.05, "eps_test": 0.0, "eps_hypothesis": 20.0}])
    fig = fig3_breakdown(pd.concat([results, theory_rows], ignore_index=True))
    named = traces(fig)
    assert set(named) == {
        "Noise reduction: testing",
        "Noise reduction: generation",
        "Doubling: testing",
        "Doubling: generation",
    }
    assert list(named["Noise reduction: testing"].y) == [2.0, 1.0]
    # α = 0.1: the fallback run (generation ∞) is left out, so the median is of 0.1, 0.2, 0.3.
    assert list(named["Noise reduction: generation"].y) == pytest.approx([0.25, 0.2])
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.title.text
    assert "fallback" in fig.layout.title.subtitle.text


def test_fig4_draws_norms_against_the_bound(results):
    results = results.assign(theta_norm=np.arange(1, len(results) + 1, dtype=float))
    fig = fig4_theta_norm(results)
    named = traces(fig)
    bound = named[f"bound on ‖θ‖ = {M:.4g}"]
    assert list(bound.y) == [M, M]
    assert list(named["Noise reduction: median"].y) == pytest.approx([2.5, 6.5])
    assert fig.layout.yaxis.type == "log" and "θ" in fig.layout.yaxis.title.text


def test_paper_table(results):
    table = paper_table(results)
    assert list(table["α"]) == [0.05, 0.1]
    assert table["Noise reduction: median ε"].tolist() == pytest.approx([2.25, 1.25])
    assert table["Noise reduction: median e^ε"].tolist() == ["9.49", "3.49"]
    assert table["Noise reduction: fallback share"].tolist() == [0.0, 0.25]
    assert table["Doubling: median ε"].tolist() == pytest.approx([4.5, 2.5])
    assert paper_table(results, alphas=[0.1])["α"].tolist() == [0.1]


def test_paper_table_median_is_infinite_when_half_fall_back():
    rows = [nr(0.05, 1.0, g) for g in (0.1, 0.2, INF, INF)]
    table = paper_table(frame(rows))
    assert table["Noise reduction: median ε"].iloc[0] == INF
    assert table["Noise reduction: median e^ε"].iloc[0] == "∞"
    assert table["Noise reduction: fallback share"].iloc[0] == 0.5


def test_paper_table_writes_huge_risk_factors_with_three_significant_digits():
    eps = math.log(4.018958564420263e39)
    table = paper_table(frame([nr(0.05, eps - 1.0, 1.0), doubling(0.05, 2000.0, 87.0)]))
    assert table["Noise reduction: median e^ε"].tolist() == ["4.02 × 10³⁹"]
    assert table["Doubling: median e^ε"].tolist() == ["2.36 × 10⁹⁰⁶"]  # e^2087 overflows a float
    assert table["Noise reduction: median ε"].tolist() == [pytest.approx(eps)]
    page = html_report(frame([nr(0.05, eps - 1.0, 1.0)]), {})
    results_table = page[page.index('class="dataframe results"') :].split("</table>")[0]
    assert "4.02 × 10³⁹" in results_table and "e+39" not in results_table


def test_html_report_is_self_contained(results):
    page = html_report(results, {"dataset": "<b>mine</b>", "trials": 4})
    assert page.startswith("<!doctype html>")
    assert len(re.findall(r'<div id="[^"]+" class="plotly-graph-div"', page)) == 6
    # plotly.js is embedded once (no CDN), so the report works offline.
    assert page.count("Plotly.newPlot") == 6
    assert len(re.findall(r"plotly\.js v\d", page)) == 1
    assert re.search(r"<script[^>]*\ssrc=", page) is None
    assert "&lt;b&gt;mine&lt;/b&gt;" in page and "<b>mine</b>" not in page
    assert "Fig. 1" in page and "Fig. 4" in page and "Noise reduction: median ε" in page


def test_html_report_states_the_delta_of_gaussian_runs(results):
    assert "(ε, δ)-ex-post" not in html_report(results, {})
    gaussian = results.assign(noise="gaussian", delta=1e-6)
    assert "(ε, δ)-ex-post loss with δ = 1e-06" in html_report(gaussian, {})


def test_report_says_how_the_calibration_compares_with_the_papers(results):
    caveat = calibration_caveat(results)
    assert "“theorem” (ε_A 3.27× the authors' at T = 1000, γ = 0.1)" in caveat
    assert calibration_caveat(results.assign(calibration="paper-code")) == ""
    # The exact presets price their clipped query with Δ_R(α) ≤ Δ_R: c/c_paper-code bounds their ε_A ratio from above.
    assert "“exact-paper-opt” (ε_A at most 0.77×" in calibration_caveat(results.assign(calibration="exact-paper-opt"))
    assert caveat in html_report(results, {})


class Lasso(Method):
    """A toy method that Fig. 1 compares with noise reduction: its figures come from its class alone."""

    key = "lasso"
    label = "Lasso"
    in_sentence = "the lasso"
    color = "#654321"
    comparison = Comparison(NoiseReduction.key, "ε, δ", delta_caveat=True)

    def run(self, setting, rng, exact=False) -> RunResult:
        raise NotImplementedError("never run: the figures read a hand-made frame")

    def declared_bound(self, setting) -> tuple[float, float]:
        return 1.0, 0.0


def test_a_method_with_a_comparison_gets_its_fig1_from_its_class(results):
    register(Lasso())
    try:
        _check_the_lasso_figures(results)
    finally:
        unregister(Lasso.key)


def _check_the_lasso_figures(results: pd.DataFrame) -> None:
    rows = [{"method": "lasso", "alpha": a, "eps_test": 0.0, "eps_hypothesis": e} for a, e in ((0.05, 5.0), (0.1, 4.0))]
    both = pd.concat([results, frame(rows)], ignore_index=True)
    fig = fig1_epsilon(both, "lasso")
    named = traces(fig)
    assert "Lasso: median" in named and "Noise reduction: median" in named and "Doubling: median" not in named
    assert named["Lasso: median"].line.color == "#654321"
    subtitle = fig.layout.title.subtitle.text
    assert subtitle.startswith("noise reduction vs the lasso") and "(ε, δ) guarantee" in subtitle.replace("<br>", " ")
    # The report draws it when it ran (after the paper's comparisons) and explains its δ; not when it did not.
    titles = [f.layout.title.subtitle.text.split("<br>")[0] for f in report_figures(both)]
    assert titles[:4] == [
        f"noise reduction vs {name}" for name in ("the theory approach", "doubling", "doubling", "the lasso")
    ]
    assert "the lasso" not in " ".join(f.layout.title.subtitle.text for f in report_figures(results))
    assert DELTA_CAVEAT in html.unescape(html_report(both, {})) and DELTA_CAVEAT not in html.unescape(
        html_report(results, {})
    )
    with pytest.raises(ValueError, match="versus"):
        fig1_epsilon(both, "nr")  # noise reduction is the partner, not a comparison
