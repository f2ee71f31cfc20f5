"""accfirst: accuracy-first differential privacy for regularised ERM.

State the excess risk α you need and the failure probability γ; the package finds
the most private hypothesis that meets it and reports the ex-post privacy loss it
paid (Ligett, Neel, Roth, Waggoner & Wu, "Accuracy First", NeurIPS 2017).
docs/mathematics.md explains every number it computes.
"""

from accfirst.accounting.counts import release_counts
from accfirst.accounting.filters import ExPostFilter, SplitBudget, ZCDPFilter, filtered_search
from accfirst.erm.generators import CovariancePerturbation, OutputPerturbation, make_generator
from accfirst.erm.gibbs import gibbs_run
from accfirst.erm.logistic import LogisticProblem
from accfirst.erm.problem import Problem
from accfirst.erm.problems import prepared_problem
from accfirst.erm.quality import Accuracy, VarianceExplained
from accfirst.erm.ridge import RidgeProblem
from accfirst.erm.theory import theory_epsilon
from accfirst.erm.trust_region import solve_trust_region
from accfirst.errors import AccFirstError, DataError
from accfirst.mechanisms.above_threshold import interactive_above_threshold
from accfirst.mechanisms.brownian import GAUSSIAN, brownian_expost_epsilon, brownian_noise_reduction
from accfirst.mechanisms.calibration import (
    CALIBRATIONS,
    AboveThresholdCalibration,
    calibration_constant,
    failure_probability,
)
from accfirst.mechanisms.noise_reduction import LAPLACE, laplace_noise_reduction
from accfirst.methods.base import Method
from accfirst.methods.doubling import doubling, doubling_levels
from accfirst.methods.grid import default_eps_range, epsilon_grid
from accfirst.methods.nr import noise_reduction
from accfirst.methods.options import SearchOptions
from accfirst.methods.pipeline import search
from accfirst.methods.registry import METHODS, register
from accfirst.methods.relative import NoSignal, RelativeTarget
from accfirst.methods.theory import theory_run
from accfirst.result import RunResult, Trace
from accfirst.search.experiments import run_one, run_trials, trial_rng

__all__ = [
    "CALIBRATIONS",
    "GAUSSIAN",
    "LAPLACE",
    "METHODS",
    "AboveThresholdCalibration",
    "AccFirstError",
    "Accuracy",
    "CovariancePerturbation",
    "DataError",
    "ExPostFilter",
    "LogisticProblem",
    "Method",
    "NoSignal",
    "OutputPerturbation",
    "Problem",
    "RelativeTarget",
    "RidgeProblem",
    "RunResult",
    "SearchOptions",
    "SplitBudget",
    "Trace",
    "VarianceExplained",
    "ZCDPFilter",
    "brownian_expost_epsilon",
    "brownian_noise_reduction",
    "calibration_constant",
    "default_eps_range",
    "doubling",
    "doubling_levels",
    "epsilon_grid",
    "failure_probability",
    "filtered_search",
    "gibbs_run",
    "interactive_above_threshold",
    "laplace_noise_reduction",
    "make_generator",
    "noise_reduction",
    "prepared_problem",
    "register",
    "release_counts",
    "run_one",
    "run_trials",
    "search",
    "solve_trust_region",
    "theory_epsilon",
    "theory_run",
    "trial_rng",
]
