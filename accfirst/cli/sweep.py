"""``accfirst sweep``: the paper's experiment over a grid of α (Section 4, Appendix B), written as ``results.csv``
(one row per run, docs/mathematics.md#what-a-run-reports) and an offline ``report.html`` (Figs. 1–4 and the paper's
table); or over relative targets κ (docs/mathematics.md#a-relative-accuracy-target), or over targets in the units people
read, R² ≥ r or accuracy ≥ a, certified by noise reduction with λ chosen privately
(docs/mathematics.md#a-target-in-the-units-people-read), each with a report of its own. ``command_line`` writes the
sweep that reruns the app's settings.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time

from accfirst.cli.data import command_problem
from accfirst.cli.options import (
    ALGORITHM,
    CEILING,
    DATA,
    OUT,
    Group,
    OneOf,
    Subcommand,
    lambda_options,
    names,
    option,
    search_options,
)
from accfirst.cli.output import EXIT_INTERRUPTED, PROG, ProgressLine, command_seed, interrupt_flag, make_out_folder
from accfirst.datasets.prepared import PUBLIC_MODE
from accfirst.erm.quality import Accuracy, QualityTarget, VarianceExplained
from accfirst.errors import AccFirstError
from accfirst.mechanisms.brownian import DEFAULT_DELTA
from accfirst.methods.gibbs import GibbsPosterior
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import AUTO_LAM, DEFAULT_TEST_BUDGET, SearchOptions
from accfirst.methods.registry import METHODS, paper_methods, validate_methods
from accfirst.methods.relative import RelativeTarget
from accfirst.plots.certified import html_certified_report
from accfirst.plots.paper import html_report
from accfirst.plots.relative import html_relative_report
from accfirst.search.sweep import PAPER_ALPHAS_TEXT, parse_alphas, parse_goals, parse_kappas, sweep
from accfirst.snippet import RunSettings
from accfirst.validation import REPEATABLE, validate_count, validate_gamma


def sweep_options() -> Group:
    """The ``sweep`` options, made with the parser: the methods offered are those registered at that moment."""
    return Group(
        "sweep",
        (
            option(
                "--methods",
                f"methods among {','.join(METHODS)} (default: the paper's {','.join(paper_methods())}; with --r2 or "
                f"--accuracy: {NoiseReduction.key}, the one method that certifies them)",
                type=names,
                metavar="M,M,...",
            ),
            OneOf(
                (
                    option(
                        "--alphas",
                        "requested excess risks α: a range with STOP included, or a list "
                        f"(default: {PAPER_ALPHAS_TEXT})",
                        metavar="START:STOP:STEP|A,A,...",
                    ),
                    option(
                        "--kappa",
                        "relative targets instead of α: each κ in (0, 1) asks the model to keep at least 1 − κ of what "
                        "the best model gains over predicting nothing (excess risk ≤ κ·R(0)); each run first buys a "
                        "private lower bound of R(0) and reports its ε beside the others (derived)",
                        metavar="K,K,...",
                    ),
                    option(
                        "--r2",
                        "ridge: targets in R² instead of α: each r in (0, 1) asks noise reduction to certify that the "
                        "released model explains at least a share r of the training targets' variance, with "
                        "probability ≥ 1 − γ, λ chosen privately from a public grid (--lam auto, the default; derived)",
                        metavar="R,R,...",
                    ),
                    option(
                        "--accuracy",
                        "logistic: targets in accuracy instead of α: each a in (0, 1) asks for at least a share a of "
                        "the training rows classified right; as --r2",
                        metavar="A,A,...",
                    ),
                )
            ),
            CEILING,
            option("--trials", "runs per method and α (default: 20)", type=int, default=20, metavar="N"),
            option(
                "--workers",
                "processes to use; 1 runs in this process (default: the number of CPUs)",
                type=int,
                default=os.cpu_count() or 1,
                metavar="N",
            ),
            OUT,
        ),
    )


def command(args: argparse.Namespace, argv: list[str]) -> int:
    """Run every method × target × trial, write ``results.csv`` and ``report.html``; 130 when interrupted."""
    alphas, kappas, goals = _targets(args)
    methods = args.methods or ([NoiseReduction.key] if goals else list(paper_methods()))
    options, lam = lambda_options(
        args, search_options(args), bool(goals), "a sweep runs every method at one λ toward α or κ: give a number"
    )
    validate_methods(methods, options)
    validate_gamma(args.gamma)
    for flag in ("trials", "workers"):
        validate_count(f"--{flag}", getattr(args, flag), 1)
    make_out_folder(args.out)
    problem, task, steps = command_problem(args, lam)
    seed, seed_text = command_seed(args, problem.prep_mode == PUBLIC_MODE)
    print(f"{PROG}: {task} problem, n = {problem.n}, p = {problem.p}; {steps[-1]}", file=sys.stderr)
    if REPEATABLE in seed_text:
        print(f"{PROG}: {REPEATABLE}", file=sys.stderr)
    started = time.perf_counter()
    stopped, restore = interrupt_flag()
    try:
        frame = sweep(
            problem,
            alphas,
            args.gamma,
            methods,
            args.trials,
            seed,
            workers=args.workers,
            progress=ProgressLine(sys.stderr),
            should_stop=stopped,
            kappas=kappas,
            goals=goals,
            **options.to_dict(),
        )
    finally:
        restore()
    seconds = time.perf_counter() - started
    total = (len(alphas) + len(kappas) + len(goals)) * len(methods) * args.trials
    settings = {
        "command": " ".join([PROG, *argv]),
        "data": args.dataset or str(args.csv or args.parquet),
        "task": task,
        "n (training rows)": problem.n,
        "p (features)": problem.p,
        "preparation": steps[-1].removeprefix("preparation: "),
        "λ": _lambda_setting(options, lam, bool(goals)),
        "public radius R": "none (R = M)" if args.radius is None else args.radius,
        "radius mode": args.radius_mode,
        "γ": args.gamma,
        "T": args.T,
        "generator": frame["generator"].iloc[0] if len(frame) else args.generator,
        "calibration": args.calibration,
        "noise": args.noise
        + (f" (δ = {args.delta:g}; derived, consistent with Rogers et al. 2023)" if args.noise == "gaussian" else ""),
        "δ of the Gibbs posterior": args.delta if GibbsPosterior.key in methods else "not run",
        "methods": ", ".join(methods),
        **_target_settings(args, alphas, kappas, goals, options),
        "trials": args.trials,
        "seed": seed_text,
        "runs": f"{len(frame)} of {total}" + (" (interrupted)" if len(frame) < total else ""),
    }
    frame.to_csv(args.out / "results.csv", index=False)
    if len(frame):
        report = html_certified_report if goals else html_relative_report if kappas else html_report
        (args.out / "report.html").write_text(report(frame, settings, steps), encoding="utf-8")
    print(f"wrote {args.out / 'results.csv'} ({len(frame)} runs) and {args.out / 'report.html'}")
    # How long the runs took depends on the data: said on the terminal only, never written to the results.
    print(f"{PROG}: {seconds:.1f} s on {args.workers} worker(s) (a local timing, not in the results)", file=sys.stderr)
    if len(frame) < total:
        print(f"{PROG}: interrupted after {len(frame)} of {total} runs", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0


def _targets(args: argparse.Namespace) -> tuple[list[float], list[RelativeTarget], list[QualityTarget]]:
    """The sweep's α values, its relative targets (``--kappa``) or its targets in R² or accuracy (``--r2``,
    ``--accuracy``), one kind only."""
    if args.kappa is not None:
        return [], [RelativeTarget(kappa) for kappa in parse_kappas(args.kappa)], []
    if args.r2 is not None:
        return [], [], parse_goals(args.r2, VarianceExplained)
    if args.accuracy is not None:
        return [], [], parse_goals(args.accuracy, Accuracy)
    return parse_alphas(args.alphas or PAPER_ALPHAS_TEXT), [], []


def _lambda_setting(options: SearchOptions, lam: float, certified: bool) -> str | float:
    """The report's λ: the one every run used, or how runs toward a target in R² or accuracy chose theirs."""
    if certified and options.lambdas is None:
        return "chosen privately in each run from the default public grid (--lam auto)"
    return lam


def _target_settings(
    args: argparse.Namespace,
    alphas: list[float],
    kappas: list[RelativeTarget],
    goals: list[QualityTarget],
    options: SearchOptions,
) -> dict[str, str]:
    """The report's rows about the target: the α grid, the relative targets and what they cost, or the targets in R²
    or accuracy and their ceiling."""
    if goals:
        return {
            "target": f"certified {goals[0].unit} ≥ {', '.join(f'{goal.goal:g}' for goal in goals)} with probability "
            "≥ 1 − γ (derived)",
            "ceiling": f"ε = {options.ceiling:g} per run beyond the preparation",
        }
    if not kappas:
        return {"α": f"{args.alphas or PAPER_ALPHAS_TEXT} ({len(alphas)} values)"}
    shares = ", ".join(f"{target.share_kept:.0%}" for target in kappas)
    return {
        "target": f"relative: κ = {args.kappa} (keep at least {shares} of what the best model gains over predicting "
        "nothing); α = κ·Ŝ, Ŝ a private lower bound of R(0) bought in each run (derived)",
        "test budget": f"ε = {SearchOptions.test_budget if args.test_budget is None else args.test_budget:g} "
        "(a bound on R(0) below what this allows: no signal)",
    }


def command_line(settings: RunSettings, alphas_text: str | None = None) -> str:
    """The ``python -m accfirst sweep`` command that reruns ``settings`` on a built-in dataset.

    Same seed, same rows as the app's sweep. ``alphas_text`` (e.g. ``0.005:0.2:0.005``)
    replaces the explicit list of α. Raises ``AccFirstError`` for uploaded data (the
    command line reads those from a file with ``--csv``; the app keeps uploads in memory).
    """
    if settings.dataset.builtin is None:
        raise AccFirstError("command_line needs a built-in dataset; for your own file use --csv PATH --target COL")
    dataset_options = dict(settings.dataset.options)
    words = ["python", "-m", PROG, "sweep", "--dataset", settings.dataset.builtin]
    if "test_size" in dataset_options:
        words += ["--test-size", repr(dataset_options["test_size"])]
    if "seed" in dataset_options:
        words += ["--split-seed", str(dataset_options["seed"])]
    options = settings.options
    lam = repr(settings.lam)
    if settings.goals:
        words += [f"--{settings.quality_target(settings.goals[0]).key}", ",".join(repr(g) for g in settings.goals)]
        if options.lambdas is not None and len(options.lambdas) > 1:
            raise AccFirstError("the command line takes one λ or auto; this record has a grid of several")
        lam = AUTO_LAM if options.lambdas is None else repr(options.lambdas[0])
        if options.ceiling != SearchOptions.ceiling:
            words += ["--ceiling", repr(options.ceiling)]
    elif settings.kappas:
        words += ["--kappa", ",".join(repr(k) for k in settings.kappas)]
        if options.test_budget != DEFAULT_TEST_BUDGET:
            words += ["--test-budget", repr(options.test_budget)]
    else:
        words += ["--alphas", alphas_text or ",".join(repr(a) for a in settings.alphas)]
    words += ["--methods", ",".join(settings.methods), "--trials", str(settings.trials)]
    words += ["--lam", lam, "--gamma", repr(settings.gamma), "--T", str(options.T)]
    if settings.radius is not None:
        words += ["--radius", repr(settings.radius)]
    words += ["--calibration", options.calibration, "--seed", str(settings.seed)]
    if options.generator is not None:
        words += ["--generator", options.generator]
    if options.eps_min is not None:
        words += ["--eps-min", repr(options.eps_min)]
    if options.eps_max is not None:
        words += ["--eps-max", repr(options.eps_max)]
    if options.spacing != SearchOptions.spacing:
        words += ["--spacing", options.spacing]
    if options.noise != SearchOptions.noise:
        words += ["--noise", options.noise]
    if options.fallback != SearchOptions.fallback:
        words += ["--fallback", options.fallback]
    if options.radius_mode != SearchOptions.radius_mode:
        words += ["--radius-mode", options.radius_mode]
    for flag, value in (("--radius-epsilon", options.radius_epsilon), ("--radius-beta", options.radius_beta)):
        if value is not None:
            words += [flag, repr(value)]
    if options.noise != SearchOptions.noise or options.delta != DEFAULT_DELTA:
        words += ["--delta", repr(options.delta)]
    return shlex.join(words)


SUBCOMMAND = Subcommand(
    "sweep",
    help="run every method over a grid of α (or κ, R² or accuracy targets); write results.csv and report.html",
    description="Reproduce the paper's Figures 1–4 on a dataset: every method × α × trial, "
    "written as a tidy results.csv and an offline report.html. With --kappa, --r2 or --accuracy the targets are "
    "relative, or in R² or accuracy (noise reduction, λ chosen privately), each with a report of its own.",
    options=lambda: (DATA, ALGORITHM, sweep_options()),
    command=command,
)
