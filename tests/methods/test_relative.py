"""The relative target κ (docs/mathematics.md#a-relative-accuracy-target): Δ_S, the private lower bound Ŝ, the public
rule, the guarantee, the bill."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from accfirst import LogisticProblem, RidgeProblem, SearchOptions, run_trials
from accfirst.datasets import from_frame, load_builtin
from accfirst.erm.problem import Problem
from accfirst.errors import AccFirstError
from accfirst.interpret import plain_sentence, summarise_runs
from accfirst.mechanisms.calibration import calibration_constant
from accfirst.mechanisms.lower_bound import lower_bound_margin, private_lower_bound
from accfirst.mechanisms.noise_reduction import LAPLACE
from accfirst.methods import relative
from accfirst.methods.pipeline import feasible_problem, search
from accfirst.methods.radius import radius_step
from accfirst.methods.relative import (
    BETA_SHARES,
    NoSignal,
    RelativeTarget,
    relative_bound,
    release_scale,
    scale_plan,
)
from accfirst.search.experiments import declared_bound, trial_rng
from accfirst.teaching.composition import zcdp_to_dp
from tests.data import make_logistic_data, make_ridge_data

FREE = SearchOptions(radius_mode="free")
# A statistical check fails by chance with probability below this (stated per check below).
FALSE_FAILURE = 1e-4


# ---------------------------------------------------------------- Δ_S = W/n on adversarial neighbours


def _extreme_pair(
    task: str, lam: float, radius: float | None, n: int, seed: int, rho: float = 1.0
) -> tuple[Problem, Problem]:
    """A dataset whose θ* sits on the largest ball the rows allow, and its neighbour that moves R(0) the most.

    Every row but a few random ones is x = c·e₁, y = +1 with c chosen so that θ* = r·e₁ (r = min(R, R₀)):
    then every row's ℓ(0) − ℓ(θ*) is near one end of its range. The neighbour replaces a row at the top of
    that range (ridge t = θ*ᵀx = y = 1; logistic margin +r) by one at the bottom (x = e₁, y = −1: t = −r).

    With ``rho`` < 1 the rows have Euclidean norm at most ρ and the problems carry that bound: ρ times the rows of the
    construction for unit rows at λ/ρ² on the ball ρR, solved at λ on R
    (docs/mathematics.md#rows-of-small-euclidean-norm); ``rho`` = 1 is the construction itself.
    """
    problem_class = RidgeProblem if task == "ridge" else LogisticProblem
    X, y, neighbour_X, neighbour_y = _extreme_rows(
        task, lam / rho**2, None if radius is None else rho * radius, n, seed
    )
    return (
        problem_class(rho * X, y, lam, radius).with_row_bound(rho),
        problem_class(rho * neighbour_X, neighbour_y, lam, radius).with_row_bound(rho),
    )


def _extreme_rows(
    task: str, lam: float, radius: float | None, n: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The rows (X, y) of ``_extreme_pair``'s construction for unit rows, and its neighbour's."""
    problem_class = RidgeProblem if task == "ridge" else LogisticProblem
    bound = problem_class.implied_norm_bound(lam) if radius is None else radius
    r = min(bound, problem_class.free_radius(lam))
    rng = np.random.default_rng(seed)
    p = 3
    X = np.zeros((n, p))
    if task == "ridge":
        # θ₁ = c/(c² + λ) = r at c solving c² − c/r + λ = 0 (the larger root; c = √λ when r = R₀).
        c = (1 / r + math.sqrt(max(1 / r**2 - 4 * lam, 0.0))) / 2
        top = np.array([1 / r, 0, 0])  # t = θ*ᵀx = 1 = y: ℓ(0) − ℓ(θ*) = ½, its maximum
    else:
        c = 1.278464542761074 / r  # margin z = 1 + W(1/e) maximises z/(1 + e^z): θ* on the free ball
        top = np.array([1.0, 0, 0])  # margin +r: ℓ(0) − ℓ(θ*) at the top of its range
    X[:, 0] = min(c, 1.0)
    y = np.ones(n)
    noisy = rng.choice(np.arange(1, n), size=n // 500, replace=False)  # a few random rows, so θ* is not one-dimensional
    X[noisy] = rng.uniform(-1, 1, size=(noisy.size, p)) / p
    y[noisy] = rng.choice([-1.0, 1.0], size=noisy.size) if task == "logistic" else rng.uniform(-1, 1, noisy.size)
    X[0], y[0] = top, 1.0
    neighbour_X, neighbour_y = X.copy(), y.copy()
    neighbour_X[0], neighbour_y[0] = np.array([1.0, 0, 0]), -1.0
    return X, y, neighbour_X, neighbour_y


@pytest.mark.parametrize("task", ["ridge", "logistic"])
@pytest.mark.parametrize(("radius", "rho"), [(None, 1.0), (2.0, 1.0), (None, 0.25), (None, 0.5), (2.0, 0.5)])
def test_an_extreme_neighbour_moves_r0_by_nearly_but_never_more_than_w_over_n(
    task: str, radius: float | None, rho: float
) -> None:
    """Also with rows of norm ρ < 1, where Δ_S = W/n is the unit-row width on ρr
    (docs/mathematics.md#rows-of-small-euclidean-norm): a W that ignored ρ, or scaled it wrongly, would fail."""
    lam, n = 0.005, 4000
    problem, neighbour = _extreme_pair(task, lam, radius, n, seed=1, rho=rho)
    assert problem.row_bound == rho
    assert problem.zero_risk_sensitivity == neighbour.zero_risk_sensitivity
    moved = abs(problem.zero_risk - neighbour.zero_risk)
    assert moved <= problem.zero_risk_sensitivity
    # The bound is nearly reached: a W too small by 10% would fail here.
    assert moved >= 0.9 * problem.zero_risk_sensitivity


@pytest.mark.parametrize("task", ["ridge", "logistic"])
def test_random_rows_at_both_ends_of_the_range_never_move_r0_by_more_than_w_over_n(task: str) -> None:
    lam, n = 0.005, 500
    rng = np.random.default_rng(2)
    X, y = make_ridge_data(3, n, 4) if task == "ridge" else make_logistic_data(3, n, 4)
    problem_class = RidgeProblem if task == "ridge" else LogisticProblem
    problem = problem_class(X, y, lam)
    worst = 0.0
    for _ in range(200):
        i = int(rng.integers(n))
        moved_X, moved_y = X.copy(), y.copy()
        # A row along θ* (largest |t|) with the label that puts ℓ(θ*) at its largest or smallest.
        direction = np.sign(problem.theta_star) * (np.abs(problem.theta_star) == np.abs(problem.theta_star).max())
        moved_X[i] = direction * rng.uniform(0.5, 1.0)
        moved_y[i] = rng.choice([-1.0, 1.0])
        worst = max(worst, abs(problem_class(moved_X, moved_y, lam).zero_risk - problem.zero_risk))
    assert 0 < worst <= problem.zero_risk_sensitivity


def test_the_width_follows_the_radius_in_force() -> None:
    lam = 0.005
    free = RidgeProblem.free_radius(lam)
    assert RidgeProblem.zero_risk_width(RidgeProblem.implied_norm_bound(lam), lam) == pytest.approx((free + 1) ** 2 / 2)
    assert RidgeProblem.zero_risk_width(2.0, lam) == pytest.approx(4.5)
    assert LogisticProblem.zero_risk_width(1.5, lam) == 1.5
    assert LogisticProblem.zero_risk_width(100.0, lam) == pytest.approx(LogisticProblem.free_radius(lam))
    # Buzz's figures: buzz, n = 80,000 on R₀ = M/2: W ≈ 32.6, Δ_S ≈ 4.1·10⁻⁴.
    assert (free + 1) ** 2 / 2 == pytest.approx(32.57, abs=0.01)
    assert (free + 1) ** 2 / 2 / 80_000 == pytest.approx(4.07e-4, rel=0.01)


# ---------------------------------------------------------------- Ŝ is a lower bound with probability 1 − β_S


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_the_bound_exceeds_r0_with_probability_beta(noise: str, ridge_problem: RidgeProblem) -> None:
    """20,000 releases: the count above R(0) is Binomial(20,000, β_S); two-sided check at 1e-4 each side."""
    options = dataclasses.replace(FREE, noise=noise)
    problem = feasible_problem(ridge_problem, "nr", options)
    plan = scale_plan(problem, RelativeTarget(0.2), 0.1, options)
    rng = np.random.default_rng(20)
    draws = 20_000
    above = sum(release_scale(problem, plan, rng) > problem.zero_risk for _ in range(draws))
    low, high = binom.ppf(FALSE_FAILURE, draws, plan.beta), binom.isf(FALSE_FAILURE, draws, plan.beta)
    # Above the upper quantile: not a lower bound at level β_S. Below the lower one: the margin is too wide.
    assert low <= above <= high, (above, draws * plan.beta)


def test_the_lower_bound_is_the_statistic_plus_the_family_noise_minus_its_margin() -> None:
    value, sensitivity, level, beta = 0.3, 0.01, 0.5, 0.05
    bound = private_lower_bound(value, sensitivity, level, beta, "laplace", np.random.default_rng(4))
    noisy = float(LAPLACE.perturb(np.array([value]), sensitivity, level, np.random.default_rng(4))[0])
    assert noisy != value
    assert bound == pytest.approx(noisy - sensitivity / level * math.log(1 / (2 * beta)), rel=1e-12)
    assert lower_bound_margin("gaussian", 1.0, 0.5, 0.05) == pytest.approx(1.6448536, rel=1e-6)
    for bad in ({"beta": 0.5}, {"beta": 0.0}, {"level": -1.0}):
        arguments = {"value": 1.0, "sensitivity": 1.0, "level": 1.0, "beta": 0.1, **bad}
        with pytest.raises(AccFirstError):
            private_lower_bound(noise="laplace", rng=np.random.default_rng(0), **arguments)


# ---------------------------------------------------------------- the public rule


def _pair_with_equal_public_quantities() -> tuple[RidgeProblem, RidgeProblem]:
    """Two ridge problems with the same n, p and λ whose R(0) differ by a factor of about 30."""
    X, y = make_ridge_data(5, 3000, 4)
    rng = np.random.default_rng(6)
    weak = rng.uniform(-1, 1, size=3000) * 0.9
    return RidgeProblem(X, y, 0.005), RidgeProblem(X, weak, 0.005)


def test_the_rule_reads_only_public_quantities() -> None:
    strong, weak = _pair_with_equal_public_quantities()
    assert strong.zero_risk > 10 * weak.zero_risk
    for options in (FREE, SearchOptions(), dataclasses.replace(FREE, noise="gaussian", T=50)):
        for target in (RelativeTarget(0.5), RelativeTarget(0.1)):
            for budget in (3.0, 10.0):
                budgeted = dataclasses.replace(options, test_budget=budget)
                assert scale_plan(strong, target, 0.1, budgeted) == scale_plan(weak, target, 0.1, budgeted)


def test_the_rule_splits_gamma_and_charges_what_it_releases(ridge_problem: RidgeProblem) -> None:
    problem = feasible_problem(ridge_problem, "nr", FREE)
    laplace = scale_plan(problem, RelativeTarget(0.2), 0.1, FREE)
    assert laplace.beta in [share * 0.1 for share in BETA_SHARES] and laplace.gamma == pytest.approx(0.1 - laplace.beta)
    assert laplace.epsilon == laplace.level and laplace.delta == 0
    assert laplace.sensitivity == problem.zero_risk_sensitivity
    assert laplace.margin == pytest.approx(laplace.sensitivity / laplace.epsilon * math.log(1 / (2 * laplace.beta)))
    gaussian_options = dataclasses.replace(FREE, noise="gaussian", delta=1e-6)
    gaussian = scale_plan(problem, RelativeTarget(0.2), 0.1, gaussian_options)
    assert gaussian.delta == 1e-6 and gaussian.epsilon == pytest.approx(zcdp_to_dp(gaussian.level, 1e-6))
    # The floor on Ŝ is the scale at which the test alone costs the budget, c(γ − β_S)·Δ_R(κS)/(κS): a smaller κ
    # needs a larger R(0), a larger budget a smaller one, by at least its factor (Δ_R(α) of the clipped test
    # falls with α too; here it is below Δ_R at the larger budget's floor).
    half = scale_plan(problem, RelativeTarget(0.1), 0.1, FREE)
    assert half.floor > laplace.floor
    wide = scale_plan(problem, RelativeTarget(0.2), 0.1, dataclasses.replace(FREE, test_budget=100.0))
    for plan, budget in ((laplace, 10.0), (wide, 100.0)):
        alpha = plan.kappa * plan.floor
        test = (
            calibration_constant(FREE.T, plan.gamma, FREE.calibration)
            * problem.test_sensitivity(alpha, clipped=True)
            / alpha
        )
        assert test == pytest.approx(budget, rel=1e-9)
    assert problem.test_sensitivity(0.2 * wide.floor, clipped=True) < problem.query_sensitivity
    assert wide.floor < laplace.floor / 10
    # ε_S grows with the design point: ten times the budget, about nine times ε_S here (β_S unchanged; the clipped
    # test's Δ_R(α) is not a power of α, so the factor is not exactly ten).
    assert 5 * laplace.epsilon < wide.epsilon < 15 * laplace.epsilon and wide.beta == laplace.beta


def test_the_rule_minimises_the_predicted_total_at_its_design_point(ridge_problem: RidgeProblem) -> None:
    problem = feasible_problem(ridge_problem, "nr", FREE)
    target = RelativeTarget(0.2)
    plan = scale_plan(problem, target, 0.1, FREE)
    risk = problem.query_sensitivity
    design = calibration_constant(FREE.T, 0.1, FREE.calibration) * risk / (0.2 * 10 * relative.DESIGN_SHARE)

    def predicted(epsilon: float, beta: float) -> float:
        margin = lower_bound_margin("laplace", plan.sensitivity, epsilon, beta)
        test = calibration_constant(FREE.T, 0.1 - beta, FREE.calibration) * risk / 0.2
        return epsilon + test / (design - margin) if margin < design else math.inf

    best = predicted(plan.epsilon, plan.beta)
    for factor in (0.8, 1.25):
        assert best <= predicted(plan.epsilon * factor, plan.beta)
    for share in BETA_SHARES:
        assert best <= predicted(plan.epsilon, share * 0.1) * (1 + 1e-9) or share * 0.1 == plan.beta


def test_bad_targets_are_refused(ridge_problem: RidgeProblem) -> None:
    for kappa in (0.0, 1.0, -0.2, 1.5, math.nan, "0.1"):
        with pytest.raises(AccFirstError, match="kappa"):
            RelativeTarget(kappa)  # type: ignore[arg-type]
    with pytest.raises(AccFirstError, match="test_budget"):
        SearchOptions(test_budget=0.0)
    with pytest.raises(AccFirstError, match="alpha, kappa or goal"):
        run_trials(ridge_problem, [], 0.1, ["nr"], 1, 0)


# ---------------------------------------------------------------- no number but Ŝ reads R(0)


def test_equal_public_quantities_and_equal_scale_give_equal_decisions(monkeypatch: pytest.MonkeyPatch) -> None:
    """With Ŝ forced equal on two datasets whose R(0) differ, every public number of the runs is equal."""
    strong, weak = _pair_with_equal_public_quantities()
    columns = ["method", "alpha", "kappa", "scale", "gamma", "T", "eps_scale", "calibration", "generator"]
    for forced in (0.004, 1e-6):  # a usable scale, and one below the floor (no signal)
        monkeypatch.setattr(relative, "release_scale", lambda problem, plan, rng, s=forced: s)
        frames = [
            run_trials(p, [], 0.1, ["nr", "doubling", "theory"], 2, 9, kappas=[0.3], radius_mode="free", T=40)
            for p in (strong, weak)
        ]
        pd.testing.assert_frame_equal(frames[0][columns], frames[1][columns])
        # The test's ε_A depends on α and the public Δ_R only.
        nr = [f[f["method"] == "nr"] for f in frames]
        pd.testing.assert_series_equal(nr[0]["eps_test"], nr[1]["eps_test"])
        assert frames[0]["r0"].iloc[0] != frames[1]["r0"].iloc[0]


# ---------------------------------------------------------------- the guarantee, R(θ) ≤ κ·R(0) w.p. ≥ 1 − γ


def _guarantee_failures(problem: Problem, target: RelativeTarget, runs: int, options: SearchOptions) -> tuple[int, int]:
    """(runs with R(θ) > κ·R(0), runs that showed no signal) over ``runs`` independent relative runs.

    A run that showed no signal released θ = 0, whose R(0) > κ·R(0): it counts as a failure too (conservative).
    """
    results = [search(problem, "nr", target, 0.1, trial_rng(11, "nr", target, t), options) for t in range(runs)]
    failures = sum(r.excess_risk > target.kappa * r.r0 for r in results)
    return failures, sum(isinstance(r, NoSignal) for r in results)


def _failure_ceiling(runs: int, gamma: float) -> float:
    """The count of failures that Binomial(runs, γ) exceeds with probability below ``FALSE_FAILURE``."""
    return float(binom.isf(FALSE_FAILURE, runs, gamma))


def test_the_guarantee_holds_on_a_table_whose_r0_is_tiny() -> None:
    """Student-t (6 degrees of freedom) columns scaled by the largest row norm: R(0) ≈ 0.002, 25× below α = 0.05.

    1,000 runs; the failure count is at most Binomial(1,000, γ) when the guarantee holds, and the check allows
    its 1 − 10⁻⁴ quantile (false-failure rate below 10⁻⁴).
    """
    rng = np.random.default_rng(3)
    X = rng.standard_t(6, size=(100_000, 3))
    table = pd.DataFrame(X, columns=["a", "b", "c"]).assign(y=X @ [1.0, -0.5, 0.3] + 0.5 * rng.standard_t(6, 100_000))
    data = from_frame(table, target="y", task="ridge", preparation="evaluation")  # divides by the largest row
    problem = RidgeProblem(data.X_train, data.y_train, 0.005)
    assert problem.zero_risk < 0.005
    options = dataclasses.replace(FREE, generator="output", T=20, test_budget=100.0)
    failures, no_signal = _guarantee_failures(problem, RelativeTarget(0.5), 1000, options)
    assert no_signal <= 20  # nearly every run released a model
    assert failures <= _failure_ceiling(1000, 0.1), failures


def test_the_guarantee_holds_on_buzz() -> None:
    """1,000 runs on synthetic-buzz at κ = 0.2; false-failure rate below 10⁻⁴ (as above)."""
    data = load_builtin("synthetic-buzz")
    problem = RidgeProblem(data.X_train, data.y_train, 0.005)
    options = dataclasses.replace(FREE, generator="output", T=20)
    failures, no_signal = _guarantee_failures(problem, RelativeTarget(0.2), 1000, options)
    assert no_signal == 0
    assert failures <= _failure_ceiling(1000, 0.1)


# ---------------------------------------------------------------- the bill and the record


def test_a_relative_run_records_its_whole_bill(ridge_problem: RidgeProblem) -> None:
    strong = ridge_problem.with_preparation(0.3, 1e-8)
    target, options = RelativeTarget(0.5), dataclasses.replace(FREE, test_budget=10_000.0)
    result = search(strong, "nr", target, 0.1, trial_rng(0, "nr", target, 0), options)
    assert not isinstance(result, NoSignal)
    plan = scale_plan(feasible_problem(strong, "nr", options), target, 0.1, options)
    assert result.eps_scale == plan.epsilon and result.kappa == 0.5 and result.gamma == 0.1
    assert result.alpha == pytest.approx(0.5 * result.scale) and result.scale > plan.floor
    assert result.eps_total == pytest.approx(
        result.eps_prep + result.eps_radius + result.eps_scale + result.eps_test + result.eps_hypothesis
    )
    assert result.eps_prep == 0.3 and result.delta == pytest.approx(1e-8)
    assert result.success == (result.excess_risk <= 0.5 * result.r0)
    bound, delta = declared_bound(strong, "nr", target, 0.1, options)
    assert bound >= result.eps_scale + result.eps_test + result.eps_hypothesis and delta == 0
    assert (bound, delta) == relative_bound(feasible_problem(strong, "nr", options), "nr", target, 0.1, options)


def test_a_gaussian_relative_run_adds_the_scale_delta(ridge_problem: RidgeProblem) -> None:
    options = dataclasses.replace(FREE, noise="gaussian", delta=1e-6, test_budget=1_000.0)
    target = RelativeTarget(0.5)
    result = search(ridge_problem, "nr", target, 0.1, trial_rng(0, "nr", target, 1), options)
    absolute = search(ridge_problem, "nr", 0.01, 0.1, trial_rng(0, "nr", 0.01, 1), options)
    assert absolute.delta == 1e-6 and result.delta == pytest.approx(2e-6)
    plan = scale_plan(feasible_problem(ridge_problem, "nr", options), target, 0.1, options)
    assert result.eps_scale == pytest.approx(zcdp_to_dp(plan.level, 1e-6))


def test_no_signal_is_a_result_that_says_so_and_charges_the_scale(ridge_problem: RidgeProblem) -> None:
    target = RelativeTarget(0.1)
    frame = run_trials(ridge_problem, [], 0.1, ["nr", "theory"], 3, 0, kappas=[target], radius_mode="free")
    assert frame["alpha"].isna().all()  # R(0) ≈ 0.005 on 1,600 rows: too little to keep privately
    result = search(ridge_problem, "nr", target, 0.1, trial_rng(0, "nr", target, 0), FREE)
    assert isinstance(result, NoSignal) and "no signal a private model could keep" in result.message
    assert result.eps_total == result.eps_scale > 0 and not result.success and not result.fallback
    np.testing.assert_array_equal(result.theta, np.zeros(ridge_problem.p))
    assert result.scale <= result.floor and result.excess_risk == pytest.approx(ridge_problem.zero_risk)
    summary = summarise_runs(frame).set_index("method")
    assert summary.loc["nr", "no_signals"] == 3
    assert "no signal a private model could keep" in plain_sentence(summary.reset_index().iloc[0])


def test_kappa_cells_never_share_noise_with_alpha_cells() -> None:
    for value in (0.1, 0.5):
        alpha_draw = trial_rng(0, "nr", value, 0).random()
        kappa_draw = trial_rng(0, "nr", RelativeTarget(value), 0).random()
        assert alpha_draw != kappa_draw
        assert kappa_draw == trial_rng(0, "nr", RelativeTarget(value), 0).random()


def test_summaries_and_sentences_of_a_relative_target() -> None:
    data = load_builtin("synthetic-buzz")
    problem = RidgeProblem(data.X_train, data.y_train, 0.005)
    frame = run_trials(problem, [0.05], 0.1, ["nr", "theory"], 3, 1, kappas=[0.2], radius_mode="free", T=50)
    relative_rows = frame[frame["kappa"].notna()]
    assert (relative_rows["eps_scale"] > 0).all() and (frame.loc[frame["kappa"].isna(), "eps_scale"] == 0).all()
    with pytest.raises(AccFirstError, match="single kappa"):
        summarise_runs(frame)
    summary = summarise_runs(relative_rows).set_index("method")
    assert summary.loc["nr", "alpha"] == pytest.approx(relative_rows[relative_rows["method"] == "nr"]["alpha"].median())
    sentences = {row["method"]: plain_sentence(row) for _, row in summarise_runs(relative_rows).iterrows()}
    assert "kept at least 80%" in sentences["nr"]
    assert "released α = κ·Ŝ" in sentences["theory"]


def test_a_private_radius_is_planned_at_the_smallest_alpha_and_both_parts_are_billed() -> None:
    """With ``radius_mode="private"`` Ŝ comes first (on R₀); the radius is planned at α = κ·floor, public.

    Deterministic (fixed seeds). On synthetic-buzz the rule buys a radius at κ = 0.2; the run's γ is split
    three ways and its declared bound covers what it paid.
    """
    data = load_builtin("synthetic-buzz")
    problem = RidgeProblem(data.X_train, data.y_train, 0.005)
    options, target = SearchOptions(radius_mode="private"), RelativeTarget(0.2)
    ceiling = feasible_problem(problem, "nr", options)
    plan = scale_plan(ceiling, target, 0.1, options)
    step = radius_step(ceiling, "nr", target.kappa * plan.floor, plan.gamma, options)
    assert step.private and step.gamma == pytest.approx(0.1 - plan.beta - step.plan.beta)
    result = search(problem, "nr", target, 0.1, trial_rng(0, "nr", target, 0), options)
    assert result.eps_radius == step.plan.epsilon > 0 and result.eps_scale == plan.epsilon
    assert result.norm_bound < ceiling.norm_bound and result.gamma == 0.1
    assert result.alpha == pytest.approx(0.2 * result.scale) and result.success
    assert result.eps_total == pytest.approx(
        result.eps_radius + result.eps_scale + result.eps_test + result.eps_hypothesis
    )
    assert declared_bound(problem, "nr", target, 0.1, options)[0] >= result.eps_total
