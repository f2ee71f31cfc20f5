"""Guidance: when it appears, the numbers in its sentence, and its predictions against reruns."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from accfirst import SearchOptions, run_trials
from accfirst.datasets import from_frame, load_builtin
from accfirst.erm.problems import PROBLEMS, prepared_problem
from accfirst.guidance import advise, needs_guidance
from accfirst.interpret import summarise_runs
from accfirst.mechanisms.calibration import calibration_constant
from accfirst.prediction import below_cliff, feasible_radius, predict_epsilon
from tests.erm.test_problems import ridge_gap

GAMMA = 0.1
LAMBDAS = (1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1)
TRIALS = 30


def summary_frame(**medians: float) -> pd.DataFrame:
    """A ``summarise_runs``-like frame with the given median ε per method (pure ε, no fallback)."""
    return pd.DataFrame(
        [
            {
                "method": m,
                "median_eps": eps,
                "median_eps_test": eps / 2,
                "median_eps_hypothesis": eps / 2,
                "delta": 0.0,
                "alpha": 0.05,
            }
            for m, eps in medians.items()
        ]
    )


def test_guidance_appears_when_epsilon_is_weak_or_the_ranking_flips():
    assert needs_guidance(summary_frame(nr=9.0, doubling=30.0)) == "nr"
    assert needs_guidance(summary_frame(nr=3.0, doubling=8.0)) is None
    # e^4.7 ≈ 110 > 100 although ε < 5.
    assert needs_guidance(summary_frame(nr=4.7, doubling=9.0)) == "nr"
    assert needs_guidance(summary_frame(nr=2.0, doubling=1.5)) == "doubling"  # noise reduction lost
    assert needs_guidance(summary_frame(theory=50.0)) is None  # nothing searched
    gaussian = summary_frame(nr=9.0).assign(delta=1e-6)
    assert needs_guidance(gaussian) is None


def runs(problem, alpha: float, options: SearchOptions, trials: int = TRIALS, seed: int = 0) -> pd.DataFrame:
    return summarise_runs(run_trials(problem, [alpha], GAMMA, ["nr"], trials, seed, **options.to_dict()))


@pytest.fixture(scope="module")
def diabetes():
    data = load_builtin("diabetes", noise_seed=0)  # a repeatable table: the expected fixes are this one's
    return data, PROBLEMS[data.task](data.X_train, data.y_train, 0.005)


def test_sentence_states_the_sensitivity_and_the_test_cost(diabetes):
    _, problem = diabetes
    options = SearchOptions(radius_mode="none")  # on M: the sentence's Δ_R is the clipped test's √(2α/λ)·S(M)/n
    summary = runs(problem, 0.05, options, trials=5)
    advice = advise(problem, 0.05, GAMMA, options, summary, lam_choices=LAMBDAS)
    assert advice is not None and advice.method == "nr"
    delta_r = ridge_gap(1 / math.sqrt(0.005)) * math.sqrt(2 * 0.05 / 0.005) / problem.n
    c = calibration_constant(options.T, GAMMA, options.calibration)
    assert f"n = {problem.n:,} rows" in advice.why
    assert f"Δ_R = √(2α/λ)·S(M)/n (the test clipped at α; derived) = {delta_r:.3g}" in advice.why
    assert f"ε_A = c·Δ_R/α = {c:.3g} × {delta_r:.3g} / 0.05 = {c * delta_r / 0.05:.3g}" in advice.why
    # The measured testing part is that ε_A: the sentence's number is the runs' own.
    assert summary["median_eps_test"].iloc[0] == pytest.approx(c * delta_r / 0.05)
    titles = [fix.title for fix in advice.fixes]
    assert titles[0].startswith("Accept excess risk α = ") and titles[1] == "Regularise more: λ = 0.02"
    assert advice.fixes[1].changes == {"lam": 0.02} and advice.fixes[-1].changes == {}
    assert re.search(r"‖θ‖ ≤ 5$", titles[2]) and advice.fixes[2].changes == {"radius": 5}


def test_public_constants_match_the_problems():
    for name in ("diabetes", "breast-cancer"):
        data = load_builtin(name, noise_seed=0)
        problem = PROBLEMS[data.task](data.X_train, data.y_train, 0.005)
        other = PROBLEMS[data.task](data.X_train, data.y_train, 0.05, radius=2.0)
        radius = feasible_radius(problem, 0.05, None)
        assert radius == pytest.approx(PROBLEMS[data.task](data.X_train, data.y_train, 0.05).max_norm)
        assert type(problem).risk_sensitivity(2.0, problem.n) == pytest.approx(other.query_sensitivity)


CASES = [
    # (dataset, α, the fixes checked: keyword arguments of predict_epsilon and of the rerun)
    ("diabetes", 0.05, [{"alpha": 0.2}, {"lam": 0.02}, {"radius": 5.0}]),
    ("breast-cancer", 0.05, [{"alpha": 0.2}, {"alpha": 0.1}, {"lam": 0.02}, {"radius": 6.0}]),
]


@pytest.mark.parametrize(("name", "alpha", "fixes"), CASES)
def test_predictions_match_reruns_within_20_percent(name, alpha, fixes):
    """Each fix's predicted median ε against a rerun with the fix (30 trials, seed 0; about 6 s).

    Fixed seeds make the test deterministic. Its false-failure rate, estimated by rerunning
    every comparison of this file (these fixes and the rows test) with seeds 0–19: the largest
    error over all 180 comparisons was 8.8%, so 0 of 20 seeds would fail at 20%. A law that
    ignored the generation part, or α's effect on it, misses by 25% or more on breast cancer.
    """
    data = load_builtin(name, noise_seed=0)
    problem = PROBLEMS[data.task](data.X_train, data.y_train, 0.005)
    options = SearchOptions()
    row = runs(problem, alpha, options).iloc[0]
    for fix in fixes:
        predicted = predict_epsilon(problem, row, GAMMA, options, **fix)
        changed = PROBLEMS[data.task](data.X_train, data.y_train, fix.get("lam", 0.005), radius=fix.get("radius"))
        rerun = runs(changed, fix.get("alpha", alpha), options).iloc[0]["median_eps"]
        if "alpha" in fix and below_cliff(problem, row, options):
            # An upper estimate below covariance perturbation's cliff: a larger α may remove the cliff.
            assert rerun <= 1.2 * predicted, (fix, predicted, rerun)
        else:
            assert predicted == pytest.approx(rerun, rel=0.2), fix


def test_more_rows_prediction_matches_four_times_the_rows():
    """n → 4n rows of the same population (synthetic-intrusion): every part scales by 1/4 (about 4 s)."""
    data = load_builtin("synthetic-intrusion")
    small = PROBLEMS["logistic"](data.X_train[:500], data.y_train[:500], 0.005)
    large = PROBLEMS["logistic"](data.X_train[:2000], data.y_train[:2000], 0.005)
    options = SearchOptions()
    predicted = predict_epsilon(small, runs(small, 0.05, options).iloc[0], GAMMA, options, rows_factor=4)
    assert predicted == pytest.approx(runs(large, 0.05, options).iloc[0]["median_eps"], rel=0.2)


def test_a_flipped_ranking_is_explained_with_both_methods_numbers(diabetes):
    _, problem = diabetes
    summary = summary_frame(nr=12.0, doubling=9.0)
    options = SearchOptions(radius_mode="none")
    advice = advise(problem, 0.05, GAMMA, options, summary)
    assert advice is not None and advice.method == "doubling"
    assert advice.why.startswith("Noise reduction paid more than doubling here (median ε 12.0 against 9.00)")
    assert "ε_A = 6.00" in advice.why and "the 4.50 that doubling's few tests cost" in advice.why
    # Doubling's measured parts are scaled: 4α halves the testing part (its clipped Δ_R(α) = √(2α/λ)·S(M)/n grows like
    # √α); covariance perturbation below its cliff (4.5 < 2ε_c) keeps the generation part.
    row = summary.iloc[1]
    assert predict_epsilon(problem, row, GAMMA, options, alpha=0.2) == pytest.approx(4.5 / 2 + 4.5, rel=1e-12)


def test_the_lambda_fix_drops_a_stated_radius_that_the_new_bound_undercuts(diabetes):
    data, _ = diabetes
    # M(0.005) ≈ 14.1; R = 10 is below it, but above M(0.02) ≈ 7.07.
    problem = PROBLEMS[data.task](data.X_train, data.y_train, 0.005, radius=10.0)
    advice = advise(
        problem, 0.05, GAMMA, SearchOptions(), runs(problem, 0.05, SearchOptions(), trials=5), lam_choices=LAMBDAS
    )
    fix = next(f for f in advice.fixes if "lam" in f.changes)
    assert fix.changes == {"lam": 0.02, "radius": None}
    assert not any("radius" in f.changes and f.changes["radius"] for f in advice.fixes)  # no second radius offered


def test_predictions_with_a_private_radius_match_reruns_within_20_percent(diabetes):
    """With a private radius (diabetes, α = 0.05: the rule buys one) each fix re-plans it: against reruns (30 trials).

    Deterministic (fixed seeds). A larger α below covariance perturbation's cliff is an upper estimate (predicted 29.0
    against 20.9 at α = 0.2, where the first levels' sphere solutions pass). Measured errors: 0.7% (λ = 0.02,
    a smaller radius and its own ε_R), 0.8% (a public bound 5 as the ceiling). A prediction that kept the runs'
    radius and ε_R misses the λ fix by 50%.
    """
    data, problem = diabetes
    options = SearchOptions(radius_mode="private")
    row = runs(problem, 0.05, options).iloc[0]
    assert row["median_eps_radius"] > 0
    for fix in ({"alpha": 0.2}, {"lam": 0.02}, {"radius": 5.0}):
        predicted = predict_epsilon(problem, row, GAMMA, options, **fix)
        changed = PROBLEMS[data.task](data.X_train, data.y_train, fix.get("lam", 0.005), radius=fix.get("radius"))
        rerun = runs(changed, fix.get("alpha", 0.05), options).iloc[0]["median_eps"]
        if "alpha" in fix and below_cliff(problem, row, options):
            assert rerun <= 1.2 * predicted, (fix, predicted, rerun)  # an upper estimate below the cliff
        else:
            assert predicted == pytest.approx(rerun, rel=0.2), fix


def test_without_a_private_radius_the_guidance_offers_one(diabetes):
    """From R₀ alone, the fix that buys a radius is offered with a prediction below what the runs paid."""
    _, problem = diabetes
    options = SearchOptions(radius_mode="free")
    summary = runs(problem, 0.05, options, trials=5)
    advice = advise(problem, 0.05, GAMMA, options, summary, lam_choices=LAMBDAS)
    fix = next(f for f in advice.fixes if f.changes == {"rmode": "private"})
    assert fix.predicted_eps < float(summary["median_eps"].iloc[0])
    assert "R₀" in advice.why  # the runs' radius is named: the free one
    private = advise(
        problem,
        0.05,
        GAMMA,
        SearchOptions(radius_mode="private"),
        runs(problem, 0.05, SearchOptions(radius_mode="private"), trials=5),
        lam_choices=LAMBDAS,
    )
    assert not any(f.changes == {"rmode": "private"} for f in private.fixes)


def test_a_delta_from_the_preparation_alone_does_not_hide_the_guidance():
    """Every run on a privately prepared table carries its δ (10⁻⁶): a weak ε there still gets guidance; a δ of the
    method's own (Gaussian noise) still does not."""
    prepared = summary_frame(nr=9.0, doubling=30.0).assign(delta=1e-6, delta_prep=1e-6)
    assert needs_guidance(prepared) == "nr"
    assert needs_guidance(prepared.assign(delta=2e-6)) is None
    silent = prepared.assign(alpha=math.nan)  # every run at a relative target showed no signal: nothing to advise
    assert needs_guidance(silent) is None


@pytest.fixture(scope="module")
def relative_runs():
    """A relative target κ = 0.2 on 6,000 rows of a prepared upload-like table, at a test budget where it learns."""
    rng = np.random.default_rng(4)
    rows = 6000
    frame = pd.DataFrame({"visits": rng.uniform(0, 10, size=rows), "region": rng.choice(["north", "south"], size=rows)})
    frame["spend"] = 2 * frame["visits"] + (frame["region"] == "north") + rng.normal(scale=0.3, size=rows)
    problem = prepared_problem(from_frame(frame, target="spend", task="ridge", noise_seed=1), 0.005)
    options = SearchOptions(T=200, test_budget=100.0)
    frame = run_trials(problem, [], GAMMA, ["nr", "doubling"], 5, 0, kappas=[0.2], **options.to_dict())
    return problem, options, summarise_runs(frame)


def test_at_a_relative_target_the_looser_target_is_a_smaller_share(relative_runs):
    problem, options, summary = relative_runs
    assert summary["delta_prep"].gt(0).all() and summary["alpha"].notna().all()
    advice = advise(problem, None, GAMMA, options, summary, kappa_choices=(0.1, 0.2, 0.3, 0.5), lam_choices=(0.02,))
    assert advice is not None and advice.method == "nr"
    looser = advice.fixes[0]
    assert looser.title.startswith("Keep a smaller share") and looser.changes == {"kappa": pytest.approx(0.5)}
    assert not any("Accept excess risk" in fix.title for fix in advice.fixes)
    # The prediction keeps the preparation and the bound on R(0): no fix predicts less than they cost.
    row = summary.set_index("method").loc["nr"]
    floor = problem.prep_epsilon + float(row["median_eps_scale"])
    assert all(fix.predicted_eps > floor for fix in advice.fixes)
    same = predict_epsilon(problem, {**row, "method": "nr"}, GAMMA, options, kappa=0.2)
    assert same == pytest.approx(predict_epsilon(problem, {**row, "method": "nr"}, GAMMA, options), rel=1e-9)
    assert (
        advise(problem, None, GAMMA, options, summary, kappa_choices=(0.5,), widen=False)
        .fixes[0]
        .title.startswith("Regularise more")
    )


def test_the_smaller_share_prediction_matches_the_rerun(relative_runs):
    """Predicted median ε at κ = 0.5 against a rerun (5 trials, fixed seeds: deterministic; measured −1.3%, and −12% at
    κ = 0.3; held to 20% like the other predictions)."""
    problem, options, summary = relative_runs
    row = summary.set_index("method").loc["nr"]
    predicted = predict_epsilon(problem, {**row, "method": "nr"}, GAMMA, options, kappa=0.5)
    rerun = run_trials(problem, [], GAMMA, ["nr"], 5, 0, kappas=[0.5], **options.to_dict())
    measured = float(summarise_runs(rerun)["median_eps"].iloc[0])
    assert abs(predicted / measured - 1) <= 0.2, (predicted, measured)


def test_when_every_run_fell_back_the_guidance_says_so_without_a_prediction(diabetes):
    """No run halted: no measured part to scale (the sentence formatted NaN and the page showed an error)."""
    _, problem = diabetes
    summary = summary_frame(doubling=math.inf).assign(median_eps_test=math.nan, median_eps_hypothesis=math.nan)
    advice = advise(problem, 0.05, GAMMA, SearchOptions(), summary)
    assert advice is not None and advice.fixes == ()
    assert advice.why.startswith("No run of doubling halted: every one fell back")
