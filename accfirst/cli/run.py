"""``accfirst run``: one run of one method at one target, printed as its RunResult and its bill in words, or as one
JSON object (``--json``) (docs/mathematics.md#what-a-run-reports).

The target is an excess risk α, a relative target κ, or a target in the units people read: R² ≥ r (ridge) or
accuracy ≥ a (logistic), certified by noise reduction with λ chosen privately from a public grid
(docs/mathematics.md#a-target-in-the-units-people-read, docs/mathematics.md#choosing-λ-under-the-guarantee); without
one, the default of the task (``DEFAULT_TARGETS``, the app's). A target no table of this size could meet is refused
before the rows are prepared, so the refusal spends nothing (docs/mathematics.md#refusals-that-spend-nothing); the
command then exits with ``EXIT_REFUSED``. With the same seed a run at α or κ is trial 0 (or ``--trial``) of the
sweep's row for that target.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from collections.abc import Mapping, Sequence

from accfirst.cli.data import parquet_problem, table_to_prepare
from accfirst.cli.options import (
    ALGORITHM,
    CEILING,
    DATA,
    Group,
    OneOf,
    Subcommand,
    fixed_lam,
    lambda_options,
    option,
    search_options,
)
from accfirst.cli.output import EXIT_REFUSED, PROG, command_seed, fail
from accfirst.cli.record import HELDOUT_LABELS, NO_LEVEL_PASSED, heldout_quality, print_json, refusal_record, run_record
from accfirst.datasets.prepared import PUBLIC_MODE, PreparedData
from accfirst.erm.gibbs import APPROXIMATE_ACCURACY
from accfirst.erm.problems import PROBLEMS, prepared_problem
from accfirst.erm.quality import DEFAULT_TARGETS, Accuracy, QualityTarget, VarianceExplained
from accfirst.interpret import bill_text, format_exp_epsilon
from accfirst.interpret.certified import certificate_scope, target_text
from accfirst.methods.certified import refusal_before_reading
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import AUTO_LAM
from accfirst.methods.pipeline import Target, check_certified
from accfirst.methods.registry import METHODS
from accfirst.methods.relative import NoSignal, RelativeTarget
from accfirst.methods.theory import UNCERTIFIED_ALPHA, Theory
from accfirst.result import RunResult
from accfirst.search.experiments import search, trial_rng
from accfirst.validation import REPEATABLE, validate_count

_DEFAULTS = " and ".join(f"{target.unit} ≥ {target.goal:g} ({task})" for task, target in DEFAULT_TARGETS.items())


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
                    option(
                        "--r2",
                        "ridge: certify R² ≥ r with probability ≥ 1 − γ, the share of the training targets' variance "
                        "the model's predictions (clipped to the targets' range) explain, r in (0, 1); noise "
                        f"reduction with λ chosen privately (derived) (default target: {_DEFAULTS})",
                        type=float,
                        metavar="r",
                    ),
                    option(
                        "--accuracy",
                        "logistic: certify accuracy ≥ a with probability ≥ 1 − γ on the training rows, a in (0, 1); "
                        "as --r2",
                        type=float,
                        metavar="a",
                    ),
                    option("--alpha", "requested excess risk α > 0", type=float, metavar="α"),
                    option(
                        "--kappa",
                        "a relative target instead of α: keep at least 1 − κ of what the best model gains over "
                        "predicting nothing (excess risk ≤ κ·R(0)), κ in (0, 1); the run first buys a private lower "
                        "bound of R(0) (derived)",
                        type=float,
                        metavar="κ",
                    ),
                )
            ),
            CEILING,
            option(
                "--json",
                "print one JSON object instead of text: theta, lam, eps_total and its parts, target, goal, met, "
                "refused and reason, and the held-out quality (marked evaluation only)",
                action="store_true",
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


def named_target(args: argparse.Namespace) -> Target | None:
    """The target the command line names (``--r2``, ``--accuracy``, ``--alpha``, ``--kappa``), or ``None``."""
    if args.r2 is not None:
        return VarianceExplained(args.r2)
    if args.accuracy is not None:
        return Accuracy(args.accuracy)
    if args.kappa is not None:
        return RelativeTarget(args.kappa)
    alpha: float | None = args.alpha
    return alpha


def command(args: argparse.Namespace, argv: list[str]) -> int:
    """Run ``args.method`` once toward its target and print the record; ``EXIT_REFUSED`` when the target is refused
    before the rows are prepared (nothing spent)."""
    validate_count("--trial", args.trial, 0)
    options = search_options(args)
    target = named_target(args)
    data: PreparedData | None = None
    if args.parquet is not None:
        if not isinstance(target, (float, RelativeTarget)):
            fail(
                "with --parquet give --alpha or --kappa: a target in R² or accuracy reads the training rows one by "
                "one, and --parquet sums them block by block"
            )
        problem, _, steps = parquet_problem(args, fixed_lam(args, "with --alpha or --kappa give a number"))
    else:
        table = table_to_prepare(args)
        if target is None:
            target = DEFAULT_TARGETS[table.task]
            print(f"{PROG}: no target given: {target_text(target)}, the default for {table.task}", file=sys.stderr)
        certified = isinstance(target, (VarianceExplained, Accuracy))
        options, lam = lambda_options(args, options, certified, "with --alpha or --kappa give a number")
        if isinstance(target, (VarianceExplained, Accuracy)):
            check_certified(args.method, target)
            refusal = None
            if table.n_train is not None:
                kind = PROBLEMS[table.task]
                refusal = refusal_before_reading(kind, table.n_train, target, args.gamma, options, table.target_range)
            if refusal is not None:
                return _refused(args, argv, target, table.n_train, refusal)
        data = table.prepare()
        problem, steps = prepared_problem(data, lam, args.radius), list(data.report.steps)
    seed, seed_text = command_seed(args, problem.prep_mode == PUBLIC_MODE)
    print(f"{PROG}: {steps[-1]}", file=sys.stderr)
    result = search(problem, args.method, target, args.gamma, trial_rng(seed, args.method, target, args.trial), options)
    heldout = heldout_quality(data, result)
    refused = result.refused and isinstance(target, (VarianceExplained, Accuracy))
    if args.json:
        alternative = {"uncertified_command": uncertified_command(argv)} if refused else {}
        print_json({**run_record(result, target, heldout, seed_text), **alternative})
    else:
        _print_text(result, target, heldout, seed_text, options.lambdas is None or len(options.lambdas) > 1)
        if refused:
            assert isinstance(target, (VarianceExplained, Accuracy))
            print(uncertified_line(target, argv))
    return EXIT_REFUSED if result.refused else 0


def _refused(args: argparse.Namespace, argv: Sequence[str], target: QualityTarget, n: int | None, reason: str) -> int:
    """Say that ``target`` was refused before the rows were prepared, why, and the command of the uncertified
    alternative; ``EXIT_REFUSED``."""
    if args.json:
        print_json({**refusal_record(target, n, args.gamma, reason), "uncertified_command": uncertified_command(argv)})
    else:
        print(f"refused: {reason}")
        print(uncertified_line(target, argv))
    return EXIT_REFUSED


def uncertified_command(argv: Sequence[str]) -> str:
    """The command that runs the uncertified alternative a refusal names: ``argv``'s data and options, the theory
    approach at α = ``UNCERTIFIED_ALPHA`` instead of the target (docs/mathematics.md#refusals-that-spend-nothing).

    The options that name the target or how it is certified (``--r2``, ``--accuracy``, ``--ceiling``, ``--method``,
    ``--lam auto``) are left out, written in full or abbreviated as argparse allows.
    """
    takes_value = _run_flags()
    words, kept = iter(argv), []
    for word in words:
        flag, equals, value = word.partition("=")
        name = _resolve(flag, takes_value) if word.startswith("--") else None
        if name is None:
            kept.append(word)
            continue
        if takes_value[name] and not equals:
            value = next(words, "")
        if name in _CERTIFICATION_FLAGS or (name == "--lam" and value == AUTO_LAM):
            continue
        kept += [name, value] if takes_value[name] else [name]
    return shlex.join(["python", "-m", PROG, *kept, "--method", Theory.key, "--alpha", repr(UNCERTIFIED_ALPHA)])


def uncertified_line(target: QualityTarget, argv: Sequence[str]) -> str:
    """The text output's line that names the uncertified alternative and its exact command."""
    return (
        f"not certified: the theory approach releases one model at the ε it sets in advance from α = "
        f"{UNCERTIFIED_ALPHA:g} and public numbers (its {target.unit} is not promised): {uncertified_command(argv)}"
    )


# The options of a run that name its target in R² or accuracy or how it is certified.
_CERTIFICATION_FLAGS = frozenset({"--r2", "--accuracy", "--ceiling", "--method"})


def _run_flags() -> dict[str, bool]:
    """Every long option of ``run`` (a boolean's ``--no-`` form included) and whether it takes a value."""
    flags: dict[str, bool] = {}
    for group in (DATA, ALGORITHM, run_options()):
        for row in group.rows:
            for item in row.options if isinstance(row, OneOf) else (row,):
                action = item.settings.get("action")
                flags[item.flag] = action not in ("store_true", argparse.BooleanOptionalAction)
                if action is argparse.BooleanOptionalAction:
                    flags["--no-" + item.flag.removeprefix("--")] = False
    return flags


def _resolve(flag: str, flags: Mapping[str, bool]) -> str | None:
    """The long option ``flag`` names, in full or as the unique prefix argparse accepts; ``None`` for another word."""
    if flag in flags:
        return flag
    matches = [name for name in flags if name.startswith(flag)]
    return matches[0] if len(matches) == 1 else None


def _print_text(result: RunResult, target: Target, heldout: dict[str, float], seed_text: str, lam_chosen: bool) -> None:
    """The RunResult, its ε in words, how accurate it was, and what the seed makes of it; ``lam_chosen``: the run
    chose its λ from a grid (a target in R² or accuracy without a fixed ``--lam``)."""
    if result.refused:
        print(f"refused: {result.stopped}")
        return
    print(result)
    # set in advance, not ex-post (docs/mathematics.md#the-theory-approach, docs/mathematics.md#the-gibbs-posterior)
    if METHODS[result.method].fixed_epsilon:
        kind = f"(ε, δ)-DP with δ = {result.delta:g}" if result.delta else "pure"
    else:
        kind = f"(ε, δ)-ex-post with δ = {result.delta:g}" if result.delta else "ex-post"
    radius = f", released radius R = {result.norm_bound:.4g}" if result.eps_radius else ""
    print(
        f"{kind} {bill_text(result)}{radius}, e^ε = {format_exp_epsilon(result.eps_total)}, "
        + accuracy_line(result, target, lam_chosen)
        + (
            " — fallback: the exact θ* released, not private (ε = ∞)"
            if result.fallback and result.theta is not None
            else ""
        )
    )
    for key, value in heldout.items():
        print(f"{HELDOUT_LABELS[key]} {value:.4g} (evaluation only: it reads the test rows)")
    if REPEATABLE in seed_text:
        print(f"seed {seed_text}")
    if result.sampler is not None:
        report = result.sampler
        print(
            f"Gibbs posterior: β = {report.beta:.6g}, "
            f"P(R > α) {'≈' if result.calibration == APPROXIMATE_ACCURACY else '≤'} {report.failure_bound:.3g}"
            + (f", drawn within total variation {report.tv_bound:.3g} of the posterior" if report.tv_bound else "")
            + (f", on the ball ‖θ‖ ≤ {report.radius:.4g}" if math.isfinite(report.radius) else "")
            + f", released on the lattice {report.spacing:.3g}·ℤ"
        )


def accuracy_line(result: RunResult, target: Target, lam_chosen: bool) -> str:
    """How the run's released model compares with its target (the exact figures: evaluation only); ``lam_chosen``
    says whether a target in R² or accuracy chose its λ from a grid or was given one."""
    if isinstance(result, NoSignal):
        return result.message
    if isinstance(target, (VarianceExplained, Accuracy)):
        if result.nothing_released:
            return f"{result.stopped}: nothing released"
        scope = f", {words}" if (words := certificate_scope(target.unit)) else ""
        return (
            f"certified {target_text(target)} with probability ≥ {1 - result.gamma:g} at λ = {result.lam:.4g} "
            f"({'chosen privately' if lam_chosen else 'fixed'}){scope}; in-sample {target.unit} {result.quality:.4g} (evaluation only)"
        )
    if result.nothing_released:
        return NO_LEVEL_PASSED
    sign = "≤" if result.success else ">"
    if math.isnan(result.kappa):
        return f"excess risk {result.excess_risk:.6g} {sign} α = {result.alpha:g} (evaluation only)"
    return (
        f"released α = κ·Ŝ = {result.alpha:.6g} (Ŝ = {result.scale:.6g}); excess risk {result.excess_risk:.6g} {sign} "
        f"κ·R(0) = {result.kappa * result.r0:.6g} (R(0) = {result.r0:.6g}: evaluation only)"
    )


SUBCOMMAND = Subcommand(
    "run",
    help="one run of one method at one target (R², accuracy, α or κ); print its RunResult",
    description="One accuracy-first run; prints its RunResult (ex-post ε split into its parts), or one JSON object "
    f"with --json. Without a target: {_DEFAULTS}. A target no table of this size could meet is refused before the "
    f"rows are prepared (nothing spent; exit status {EXIT_REFUSED}).",
    options=lambda: (DATA, ALGORITHM, run_options()),
    command=command,
)
