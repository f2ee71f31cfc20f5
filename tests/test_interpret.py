"""docs/mathematics.md#setting-and-notation (posterior bound, e^ε) and docs/mathematics.md#what-a-run-reports
(aggregates keep ∞) for the explorer's headline."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from accfirst import AccFirstError, run_trials
from accfirst.datasets import from_frame
from accfirst.datasets.prepared import EXCLUDES_PREPARATION
from accfirst.erm.logistic import LogisticProblem
from accfirst.erm.ridge import RidgeProblem
from accfirst.interpret import (
    alpha_meaning,
    delta_sentence,
    describe_alpha,
    exp_epsilon,
    format_epsilon,
    format_exp_epsilon,
    format_posterior,
    format_probability,
    guarantee_text,
    median_with_inf,
    own_delta,
    plain_sentence,
    posterior_bound,
    preparation_label,
    preparation_note,
    preparation_steps,
    ranking_sentence,
    summarise_runs,
)
from tests.data import make_ridge_data


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
        (17.7, "4.86 × 10⁷"),
        (math.log(4.018958564420263e39), "4.02 × 10³⁹"),
        (math.log(9.996e10), "1.00 × 10¹¹"),
        (709.0, "8.22 × 10³⁰⁷"),
        (710.0, "2.23 × 10³⁰⁸"),
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


def _ridge_problem(p: int = 3, n: int = 400, seed: int = 5) -> tuple[RidgeProblem, object]:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n, p)), columns=[f"x{j}" for j in range(p)])
    frame["y"] = 50 + frame.to_numpy() @ np.arange(1.0, p + 1) * 10 + rng.normal(0, 5, n)
    data = from_frame(frame, target="y", task="ridge", noise_seed=0)
    return RidgeProblem(data.X_train, data.y_train, 0.005), data


def test_alpha_meaning_for_ridge_is_the_largest_mse_increase():
    """Checked against a brute-force search over the ellipsoid R(θ) = α (40,000 directions, p = 3)."""
    from scipy.optimize import minimize

    problem, _ = _ridge_problem()
    alpha = 0.01
    meaning = alpha_meaning(problem, alpha)
    theta_star = problem.theta_star
    mse_star = 2 * (problem.loss(theta_star) - problem.lam / 2 * theta_star @ theta_star)
    increase = meaning.worst**2 - meaning.baseline**2
    assert meaning.baseline == pytest.approx(math.sqrt(mse_star), rel=1e-12) and meaning.exact

    def mse_increase(theta):
        return 2 * (problem.loss(theta) - problem.lam / 2 * np.einsum("ki,ki->k", theta, theta)) - mse_star

    rng = np.random.default_rng(0)
    directions = rng.normal(size=(40_000, problem.p))
    scale = np.sqrt(alpha / problem.excess_risk(theta_star + directions))
    samples = mse_increase(theta_star + directions * scale[:, None])
    assert samples.max() <= increase * (1 + 1e-9) and samples.max() >= 0.99 * increase
    # An independent solver finds the same optimum on the constraint.
    constraint = {"type": "ineq", "fun": lambda t: alpha - problem.excess_risk(t)}
    best = minimize(
        lambda t: -mse_increase(t[None, :])[0], theta_star, constraints=[constraint], method="SLSQP", tol=1e-14
    )
    assert -best.fun == pytest.approx(increase, rel=1e-6)


def test_alpha_meaning_in_the_targets_units():
    problem, data = _ridge_problem()
    meaning = alpha_meaning(problem, 0.05, data.report, data.target_name)
    fitted = data.report.to_target_units(data.X_train @ problem.theta_star)
    direct = np.sqrt(np.mean((data.report.to_target_units(data.y_train) - fitted) ** 2))
    assert meaning.baseline == pytest.approx(direct, rel=1e-9) and meaning.unit == "y"
    assert meaning.worst > meaning.baseline
    sentence = describe_alpha(meaning)
    assert "α = 0.05" in sentence and "in y" in sentence and "at most" in sentence


def test_alpha_meaning_for_logistic_bounds_the_log_loss_increase():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(500, 4))
    labels = np.where(X @ np.array([1.0, -1.0, 0.5, 0.0]) + rng.normal(size=500) > 0, "a", "b")
    frame = pd.DataFrame(X, columns=list("pqrs")).assign(label=labels)
    data = from_frame(frame, target="label", task="logistic", positive_class="a", noise_seed=0)
    problem = LogisticProblem(data.X_train, data.y_train, 0.005)
    alpha = 0.02
    meaning = alpha_meaning(problem, alpha)
    assert not meaning.exact and meaning.unit == "nats"

    def log_loss(theta):
        return problem.loss(theta) - problem.lam / 2 * np.einsum("ki,ki->k", theta, theta)

    directions = rng.normal(size=(20_000, problem.p))
    for radius in (0.2, 0.5, 1.0, 2.0):
        thetas = problem.theta_star + radius * directions / np.linalg.norm(directions, axis=1)[:, None]
        allowed = problem.excess_risk(thetas) <= alpha
        assert log_loss(thetas[allowed]).max(initial=0) <= meaning.worst
    assert meaning.baseline == pytest.approx(log_loss(problem.theta_star[None, :])[0])
    assert "nats per row" in describe_alpha(meaning)


def summary_of(**medians: float) -> pd.DataFrame:
    """A ``summarise_runs``-like frame with the given median ε per method (δ > 0 for the Gibbs posterior)."""
    labels = {"nr": "Noise reduction", "doubling": "Doubling", "theory": "Theory", "gibbs": "Gibbs posterior"}
    return pd.DataFrame(
        [
            {"method": m, "label": labels[m], "median_eps": e, "delta": 1e-6 if m == "gibbs" else 0.0}
            for m, e in medians.items()
        ]
    )


def test_ranking_sentence_ranks_and_states_the_saving():
    sentence = ranking_sentence(summary_of(nr=2.0, doubling=3.4, theory=11.0))
    assert sentence.startswith("Least privacy first: Noise reduction (ε = 2.00), Doubling (ε = 3.40), Theory")
    # 1 − 2/3.4 = 41.2%: the saving of the first over the second, in words.
    assert "Noise reduction paid 41% less privacy than doubling for the same accuracy target" in sentence


def test_ranking_sentence_orders_by_epsilon_not_by_input():
    sentence = ranking_sentence(summary_of(nr=5.0, doubling=1.0, theory=2.0))
    assert "first: Doubling (ε = 1.00), Theory (ε = 2.00), Noise reduction" in sentence
    assert "Doubling paid 50% less privacy than the theory approach" in sentence
    assert "The theory approach promises the target only on average" in sentence
    assert "only on average" not in ranking_sentence(summary_of(nr=1.0, doubling=2.0, theory=5.0))


def test_ranking_sentence_separates_pure_and_approximate_figures():
    mixed = summary_of(nr=2.0, doubling=3.0).assign(delta=[1e-6, 0.0])
    sentence = ranking_sentence(mixed)
    assert "Figures with δ = 10⁻⁶ are (ε, δ) guarantees; the others are pure ε." in sentence
    assert "These are" not in sentence


def test_ranking_sentence_fallbacks_and_ties():
    assert "fell back to the exact, non-private model" in ranking_sentence(summary_of(nr=1.5, doubling=math.inf))
    assert "Noise reduction paid a finite privacy loss" in ranking_sentence(summary_of(nr=1.5, doubling=math.inf))
    both = ranking_sentence(summary_of(nr=math.inf, doubling=math.inf))
    assert "Every method fell back" in both and "less privacy" not in both
    tie = ranking_sentence(summary_of(nr=2.0001, doubling=2.0002))
    assert "paid the same privacy (median ε = 2.00)" in tie
    assert "less than 1% less privacy" in ranking_sentence(summary_of(nr=2.0, doubling=2.008))


def test_ranking_sentence_keeps_the_gibbs_posterior_apart_with_its_delta():
    sentence = ranking_sentence(summary_of(nr=2.0, doubling=3.0, gibbs=0.5))
    assert "Gibbs posterior (ε = 0.500, δ = 10⁻⁶) is not ranked" in sentence
    assert "first: Noise reduction" in sentence  # the smaller Gibbs ε does not take first place
    assert ranking_sentence(summary_of(gibbs=0.5)).startswith("The Gibbs posterior")
    assert ranking_sentence(summary_of(nr=2.0)) == ""


def test_a_delta_from_the_preparation_alone_ranks_every_method_and_is_said_once():
    """On a privately prepared table every run carries the preparation's δ: that is no reason to set the theory
    approach apart, nor to call a figure a weaker promise than the others'."""
    prepared = summary_of(nr=2.0, doubling=3.0, theory=5.0).assign(delta=1e-6, delta_prep=1e-6)
    sentence = ranking_sentence(prepared)
    assert "first: Noise reduction (ε = 2.00), Doubling (ε = 3.00), Theory (ε = 5.00)" in sentence
    assert "not ranked" not in sentence and "weaker" not in sentence
    assert sentence.count("δ = 10⁻⁶ from preparing the data: every method on this table shares that δ") == 1
    # The Gibbs posterior's own δ still sets it apart, on a prepared table too.
    gibbs = summary_of(nr=2.0, doubling=3.0, gibbs=0.5).assign(delta=[1e-6, 1e-6, 2e-6], delta_prep=1e-6)
    assert "Gibbs posterior (ε = 0.500, δ = 2 × 10⁻⁶) is not ranked: the δ of its own" in ranking_sentence(gibbs)


@pytest.mark.parametrize(
    ("own", "prep", "words"),
    [
        (0.0, 0.0, "a pure ε"),
        (0.0, 1e-6, "an (ε, δ) guarantee with δ = 10⁻⁶ from preparing the data"),
        (1e-6, 0.0, "an (ε, δ) guarantee with δ = 10⁻⁶"),
        (1e-6, 1e-6, "an (ε, δ) guarantee with δ = 2 × 10⁻⁶ (10⁻⁶ of its own, 10⁻⁶ from preparing the data)"),
    ],
)
def test_the_one_sentence_about_delta_says_where_it_comes_from(own, prep, words):
    assert guarantee_text(own, prep) == words
    sentence = delta_sentence(own, prep)
    assert (sentence == "") == (own == prep == 0)
    assert ("weaker promise than a pure ε" in sentence) == (own > 0)
    assert own_delta({"delta": own + prep, "delta_prep": prep}) == pytest.approx(own)


def test_plain_sentence_on_a_prepared_table_does_not_call_its_delta_a_weaker_promise():
    row = {"method": "theory", "label": "Theory", "trials": 5, "successes": 5, "fallbacks": 0, "alpha": 0.1}
    words = plain_sentence({**row, "median_eps": 2.0, "delta": 1e-6, "delta_prep": 1e-6})
    assert "every method on this table shares that δ" in words and "weaker" not in words


def test_ranking_sentence_names_delta_of_gaussian_runs(ridge_problem):
    runs = run_trials(ridge_problem, [0.1], 0.1, ["nr", "doubling"], 3, 0, T=50, noise="gaussian", delta=1e-6)
    sentence = ranking_sentence(summarise_runs(runs))
    assert "ex-post (ε, δ) guarantees with δ = 10⁻⁶" in sentence


def test_a_gibbs_run_whose_radius_leaves_no_accuracy_bound_is_refused():
    """A radius below M/2 leaves the Gibbs posterior no accuracy bound known in advance: no run, no sentence that
    could promise one (the refusal reads no data)."""
    X, y = make_ridge_data(3, 400, 4)
    problem = RidgeProblem(X, y, 0.01, radius=0.5 * RidgeProblem(X, y, 0.01).unconstrained_norm)
    with pytest.raises(AccFirstError, match="above M/2"):
        run_trials(problem, [0.05], 0.1, ["gibbs"], 2, 0)


def test_what_every_epsilon_says_about_the_preparation():
    assert preparation_label("private", 0.0881) == "includes preparing the data, ε = 0.0881"
    assert preparation_label("evaluation", math.inf) == EXCLUDES_PREPARATION
    assert preparation_label("public", 0.0) == preparation_label("given", 0.0) == ""
    shared = preparation_note("private", 0.0881, 1e-6, runs=60)
    assert shared == (
        "Every ε includes preparing the data, ε = 0.0881, δ = 10⁻⁶, paid once and shared by these 60 runs. Each of "
        "the 60 runs is a release of its own on this table: shown together they reveal what 60 runs would, and their "
        "ε add up."
    )
    assert preparation_note("evaluation", math.inf, 0.0, runs=2).endswith("and their ε add up.")
    assert preparation_note("public", 0.0, 0.0, runs=60) == preparation_note("public", 0.0, 0.0)
    assert preparation_note("private", 11.7, 0.0).endswith("ε = 11.7, paid once for this table.")
    assert "ε = 0: every statistic was declared" in preparation_note("private", 0.0, 0.0, runs=3)
    assert "preparing them cost ε = 11.7 besides" in preparation_note("private", 11.7, 0.0, included=False)
    assert EXCLUDES_PREPARATION in preparation_note("evaluation", math.inf, 0.0)
    assert "preparation is free" in preparation_note("public", 0.0, 0.0) and preparation_note("given", 0, 0) == ""


def test_the_data_report_lists_each_step_with_its_cost():
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"x": rng.normal(size=300), "z": rng.normal(size=300), "town": rng.choice(["a", "b"], 300)})
    frame["y"] = frame["x"] + rng.normal(size=300)
    schema = {"columns": {"z": {"range": [-3, 3]}}}
    data = from_frame(frame, target="y", task="ridge", schema=schema, prep_epsilon=1.0)
    table = preparation_steps(data.preparation).set_index(["step", "column"])
    assert table.loc[("declared metadata", "z"), "cost"] == "declared"
    private = table.loc[("private range", "x"), "cost"]
    assert private.startswith("private, ε = ") and float(private.split("= ")[1]) > 0
    assert table.loc[("private levels", "town"), "cost"].startswith("private, ε = ") and ", δ = " in str(
        table.loc[("private levels", "town"), "cost"]
    )
    assert table.loc[("unit-ball scaling", ""), "cost"] == "post-processing"
    evaluation = from_frame(frame, target="y", task="ridge", preparation="evaluation")
    assert "evaluation only" in set(preparation_steps(evaluation.preparation)["cost"])
