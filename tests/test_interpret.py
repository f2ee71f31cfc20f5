"""SPEC §10 (posterior bound, e^ε) and §9 (aggregates keep ∞) for the explorer's headline."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from accfirst import AccFirstError, run_trials
from accfirst.interpret import (
    exp_epsilon,
    format_epsilon,
    format_exp_epsilon,
    format_posterior,
    format_probability,
    median_with_inf,
    plain_sentence,
    posterior_bound,
    summarise_runs,
)


@pytest.mark.parametrize("eps", [0.0, 0.01, 0.5, 1.0, 2.3, 7.41, 20.0, 300.0])
@pytest.mark.parametrize("prior", [1e-6, 0.01, 0.3, 0.5, 0.99])
def test_posterior_bound_matches_the_formula(eps, prior):
    direct = prior * math.exp(eps) / (1 - prior + prior * math.exp(eps))
    assert posterior_bound(eps, prior) == pytest.approx(direct, rel=1e-12)


def test_posterior_bound_is_overflow_safe_and_monotone():
    assert posterior_bound(1e6, 0.01) == 1.0
    assert posterior_bound(math.inf, 0.01) == 1.0
    assert posterior_bound(0.0, 0.2) == pytest.approx(0.2)
    values = posterior_bound(np.array([0.0, 1.0, 5.0, 710.0, np.inf]), 0.5)
    assert np.all(np.diff(values) >= 0) and values[0] == pytest.approx(0.5)


@pytest.mark.parametrize("bad", [-0.1, math.nan])
def test_posterior_bound_rejects_negative_or_nan_epsilon(bad):
    with pytest.raises(AccFirstError, match="epsilon"):
        posterior_bound(bad, 0.5)


@pytest.mark.parametrize("prior", [0, 1, -0.5, 2, True])
def test_posterior_bound_rejects_a_prior_outside_0_1(prior):
    with pytest.raises(AccFirstError, match="prior"):
        posterior_bound(1.0, prior)


def test_exp_epsilon_overflows_to_inf_not_an_error():
    assert exp_epsilon(math.log(10)) == pytest.approx(10)
    assert exp_epsilon(800) == math.inf and exp_epsilon(math.inf) == math.inf


@pytest.mark.parametrize(
    ("eps", "text"),
    [
        (0.0, "1.00"),
        (math.log(10.0), "10.0"),
        (math.log(4.65), "4.65"),
        (math.log(495), "495"),
        (7.41, "1,650"),
        (13.1, "489,000"),
        (17.7, "4.9 × 10⁷"),
        (709.0, "8.2 × 10³⁰⁷"),
        (710.0, "2.2 × 10³⁰⁸"),
        (1e6, "10⁴³⁴²⁹⁴"),
        (math.inf, "∞"),
    ],
)
def test_format_exp_epsilon(eps, text):
    assert format_exp_epsilon(eps) == text


def test_format_epsilon_and_probability():
    assert format_epsilon(7.4131) == "7.41" and format_epsilon(math.inf) == "∞"
    assert format_epsilon(1.2e-5) == "1.2e-05"
    assert format_probability(0.943) == "94.3%"
    assert format_probability(0.0101) == "1.01%"
    assert format_probability(0.99972) == "99.97%"  # not rounded up to 100.0%
    assert format_probability(0.999999) == "> 99.99%"
    # a finite ε never reads as certainty, even when the float rounds to 1
    assert format_posterior(100.0, 0.5) == "> 99.99%"
    assert format_posterior(math.inf, 0.5) == "100%"


def test_median_with_inf_counts_fallbacks_as_largest():
    assert median_with_inf([1.0, 2.0, math.inf]) == 2.0
    assert median_with_inf([1.0, math.inf, math.inf]) == math.inf
    assert median_with_inf([1.0, 3.0, math.inf, math.inf]) == math.inf
    assert median_with_inf([1.0, 3.0]) == 2.0
    assert math.isnan(median_with_inf([]))


def _frame(method, eps, success, fallback, alpha=0.05):
    n = len(eps)
    return pd.DataFrame(
        {
            "method": [method] * n,
            "alpha": [alpha] * n,
            "gamma": [0.1] * n,
            "trial": range(n),
            "eps_total": eps,
            "eps_test": [e if math.isinf(e) else e * 0.9 for e in eps],
            "eps_hypothesis": [e if math.isinf(e) else e * 0.1 for e in eps],
            "excess_risk": [0.01] * n,
            "success": success,
            "fallback": fallback,
        }
    )


def test_summary_keeps_fallbacks_and_reports_their_share():
    runs = _frame("nr", [2.0, 3.0, math.inf, math.inf, math.inf], [True] * 5, [False, False, True, True, True])
    row = summarise_runs(runs).iloc[0]
    assert row["median_eps"] == math.inf  # 3 of 5 fell back: the median is ∞, not 3
    assert row["fallback_share"] == pytest.approx(0.6) and row["fallbacks"] == 3
    assert row["median_eps_test"] == pytest.approx(2.25)  # over the two that halted
    assert row["posterior_1pct"] == 1.0


def test_summary_on_real_runs(ridge_problem):
    runs = run_trials(ridge_problem, [0.1], 0.1, ["nr", "doubling", "theory"], 6, 3, T=100)
    summary = summarise_runs(runs).set_index("method")
    assert list(summary.index) == ["nr", "doubling", "theory"]
    for method, row in summary.iterrows():
        eps = runs.loc[runs["method"] == method, "eps_total"]
        assert row["median_eps"] == pytest.approx(float(np.median(eps)))
        assert row["posterior_50pct"] == pytest.approx(posterior_bound(row["median_eps"], 0.5))
        assert row["trials"] == 6


def test_summary_rejects_several_alphas():
    runs = pd.concat([_frame("nr", [1.0], [True], [False]), _frame("nr", [1.0], [True], [False], alpha=0.1)])
    with pytest.raises(AccFirstError, match="single alpha"):
        summarise_runs(runs)


def test_plain_sentence_reads_the_numbers():
    row = summarise_runs(_frame("nr", [math.log(10.0)] * 4, [True, True, True, False], [False] * 4)).iloc[0]
    sentence = plain_sentence(row)
    assert sentence.startswith("Noise reduction met the accuracy target (excess risk ≤ 0.05) in 3 of 4 runs")
    assert "ε = 2.30" in sentence and "e^ε = 10.0" in sentence
    assert "at most 9.17% sure" in sentence  # 0.01·10/(0.99 + 0.1)
    assert "∞" not in sentence


def test_plain_sentence_mentions_fallbacks_and_theory_caveat():
    some = summarise_runs(_frame("doubling", [1.0, 1.0, math.inf], [True] * 3, [False, False, True])).iloc[0]
    assert "In 1 of 3 runs no private model passed the test" in plain_sentence(some)
    most = summarise_runs(_frame("nr", [1.0, math.inf, math.inf], [True] * 3, [False, True, True])).iloc[0]
    assert "unbounded (ε = ∞)" in plain_sentence(most)
    assert "in 2 of them no private model passed" in plain_sentence(most)
    half = summarise_runs(_frame("nr", [1.0, math.inf], [True] * 2, [False, True])).iloc[0]
    assert "in 1 of them no private model passed" in plain_sentence(half)
    theory = summarise_runs(_frame("theory", [5.0, 5.0], [True, False], [False, False])).iloc[0]
    assert "only on average" in plain_sentence(theory)
