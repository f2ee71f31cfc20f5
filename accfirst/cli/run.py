"""``accfirst run``: one run of one method at one target, printed as its RunResult and its bill in words
(docs/mathematics.md#what-a-run-reports).

With the same seed it is trial 0 (or ``--trial``) of the sweep's row for that α.
"""

from __future__ import annotations

import argparse
import math
import sys

from accfirst.cli.data import command_problem
from accfirst.cli.options import ALGORITHM, DATA, Group, OneOf, Subcommand, option, search_options
from accfirst.cli.output import PROG, command_seed
from accfirst.datasets.prepared import PUBLIC_MODE
from accfirst.erm.gibbs import APPROXIMATE_ACCURACY
from accfirst.interpret import bill_text, format_exp_epsilon
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.registry import METHODS
from accfirst.methods.relative import NoSignal, RelativeTarget
from accfirst.result import RunResult
from accfirst.search.experiments import search, trial_rng
from accfirst.validation import REPEATABLE, validate_count


def run_options() -> Group:
    """The ``run`` options, made with the parser: the methods offered are those registered at that moment."""
    return Group(
        "run",
        (
            option(
                "--method",
                f"the method (default: {NoiseReduction.key})",
                choices=list(METHODS),
                default=NoiseReduction.key,
            ),
            OneOf(
                (
                    option("--alpha", "requested excess risk α > 0", type=float, metavar="α"),
                    option(
                        "--kappa",
                        "a relative target instead of α: keep at least 1 − κ of what the best model gains over "
                        "predicting nothing (excess risk ≤ κ·R(0)), κ in (0, 1); the run first buys a private lower "
                        "bound of R(0) (derived)",
                        type=float,
                        metavar="κ",
                    ),
                ),
                required=True,
            ),
            option(
                "--trial",
                "trial index: the run equals row N of a sweep with the same seed (default: 0)",
                type=int,
                default=0,
                metavar="N",
            ),
        ),
    )


def command(args: argparse.Namespace, argv: list[str]) -> int:
    """Run ``args.method`` once and print its RunResult, its ε in words and how accurate it was."""
    validate_count("--trial", args.trial, 0)
    options = search_options(args)
    problem, _, steps = command_problem(args)
    seed, seed_text = command_seed(args, problem.prep_mode == PUBLIC_MODE)
    print(f"{PROG}: {steps[-1]}", file=sys.stderr)
    target = args.alpha if args.kappa is None else RelativeTarget(args.kappa)
    rng = trial_rng(seed, args.method, target, args.trial)
    result = search(problem, args.method, target, args.gamma, rng, options)
    print(result)
    # set in advance, not ex-post (docs/mathematics.md#the-theory-approach, docs/mathematics.md#the-gibbs-posterior)
    if METHODS[result.method].fixed_epsilon:
        kind = f"(ε, δ)-DP with δ = {result.delta:g}" if result.delta else "pure"
    else:
        kind = f"(ε, δ)-ex-post with δ = {result.delta:g}" if result.delta else "ex-post"
    radius = f", released radius R = {result.norm_bound:.4g}" if result.eps_radius else ""
    print(
        f"{kind} {bill_text(result)}{radius}, e^ε = {format_exp_epsilon(result.eps_total)}, "
        + accuracy_line(result)
        + (
            " — fallback: the exact θ* released, not private (ε = ∞)"
            if result.fallback and result.theta is not None
            else ""
        )
    )
    if REPEATABLE in seed_text:
        print(f"seed {seed_text}")
    if result.sampler is not None:
        report = result.sampler
        print(
            f"Gibbs posterior: β = {report.beta:.6g}, acceptance rate {report.acceptance_rate:.3g}, "
            f"P(R > α) {'≈' if result.calibration == APPROXIMATE_ACCURACY else '≤'} {report.failure_bound:.3g}"
            + (f", drawn within total variation {report.tv_bound:.3g} of the posterior" if report.tv_bound else "")
            + " (the acceptance rate reads the data: evaluation only)"
        )
    return 0


def accuracy_line(result: RunResult) -> str:
    """How the run's true excess risk compares with its target (evaluation only for a relative target)."""
    if isinstance(result, NoSignal):
        return result.message
    if result.nothing_released:
        return "no level passed the test: nothing released, charged the declared top"
    sign = "≤" if result.success else ">"
    if math.isnan(result.kappa):
        return f"excess risk {result.excess_risk:.6g} {sign} α = {result.alpha:g} (evaluation only)"
    return (
        f"released α = κ·Ŝ = {result.alpha:.6g} (Ŝ = {result.scale:.6g}); excess risk {result.excess_risk:.6g} {sign} "
        f"κ·R(0) = {result.kappa * result.r0:.6g} (R(0) = {result.r0:.6g}: evaluation only)"
    )


SUBCOMMAND = Subcommand(
    "run",
    help="one run of one method at one α; print its RunResult",
    description="One accuracy-first run; prints its RunResult (ex-post ε split into testing and generation).",
    options=lambda: (DATA, ALGORITHM, run_options()),
    command=command,
)
