"""Command line: ``python -m accfirst sweep|run|counts`` — the app's numbers without the app.

``sweep`` runs the paper's experiment (Section 4, Appendix B) over a grid of α and
writes ``results.csv`` (one row per run, docs/mathematics.md#what-a-run-reports) and ``report.html`` (Figs. 1–4 and
the paper's table, viewable offline). ``run`` does one run and prints its RunResult;
with the same seed it is trial 0 (or ``--trial``) of the sweep's row for that α.
``counts`` releases counts to a relative error under one (ε, δ) budget, noise reduction
against doubling (docs/mathematics.md#counts-to-a-relative-error), and writes ``results.csv`` and ``report.html``.

``sweep`` and ``run`` read a built-in dataset (``--dataset``), a table that fits in memory
(``--csv``), or Parquet files larger than memory (``--parquet``, read block by block with
Dask by ``accfirst.scale``, imported only then).

User errors (bad options, unusable data, out-of-range parameters) print one line
``accfirst: error: …`` on stderr and exit with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import signal
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, NoReturn, TextIO

import pandas as pd

from accfirst.accounting.counts import (
    COUNT_METHODS,
    category_counts,
    compare_counts,
    histogram_counts,
    log_uniform_counts,
    summarise_counts,
)
from accfirst.datasets import BUILTIN_DATASETS, PreparedData, Schema, from_frame, load_builtin, load_schema, read_upload
from accfirst.datasets.columns import guess_task
from accfirst.datasets.prepare.budget import DEFAULT_PREP_DELTA
from accfirst.datasets.prepared import PREPARATIONS, PRIVATE_MODE, PUBLIC_MODE
from accfirst.datasets.preprocess import DEFAULT_MAX_LEVELS, MISSING_CHOICES, OUT_OF_CORE_SCALING, SCALINGS
from accfirst.erm.generators import GENERATORS, NOISES
from accfirst.erm.gibbs import APPROXIMATE_ACCURACY
from accfirst.erm.problem import Problem
from accfirst.erm.problems import prepared_problem
from accfirst.errors import AccFirstError
from accfirst.interpret import bill_text, format_exp_epsilon
from accfirst.mechanisms.brownian import DEFAULT_DELTA
from accfirst.mechanisms.calibration import CALIBRATIONS
from accfirst.methods.grid import SPACINGS
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import DEFAULT_TEST_BUDGET, FALLBACKS, RADIUS_MODES, SearchOptions
from accfirst.methods.registry import METHODS, paper_methods, validate_methods
from accfirst.methods.relative import NoSignal, RelativeTarget
from accfirst.plots.counts import count_figures
from accfirst.plots.paper import html_page, html_report
from accfirst.plots.relative import html_relative_report
from accfirst.result import RunResult
from accfirst.search.experiments import search, trial_rng
from accfirst.search.sweep import PAPER_ALPHAS_TEXT, parse_alphas, parse_kappas, sweep
from accfirst.snippet import PREPARATION_OPTIONS, RunSettings
from accfirst.validation import REPEATABLE, release_seed, validate_count, validate_gamma

PROG = "accfirst"
DEFAULT_TEST_SIZE = 0.2
DEFAULT_SPLIT_SEED = 0
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
# ``from_frame``'s options that ``--csv`` passes on by name when given, besides ``PREPARATION_OPTIONS``.
_FRAME_OPTIONS = (
    "features",
    "positive_class",
    "log1p_target",
    "scaling",
    "feature_bound",
    "target_bound",
    "prep_epsilon",
    "prep_delta",
    "noise_seed",
)


class _Parser(argparse.ArgumentParser):
    """argparse, but every error is one line ``accfirst: error: …`` and exit status 2."""

    def error(self, message: str) -> NoReturn:
        _fail(message)


def _fail(message: str) -> NoReturn:
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)
    raise SystemExit(EXIT_USAGE)


def _methods(text: str) -> list[str]:
    return [m.strip() for m in text.split(",") if m.strip()]


def _columns(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


def _any_preparation(choices: Mapping[str, Sequence[str]]) -> list[str]:
    """Every value some preparation allows (``choices``: preparation → its values), sorted; ``from_frame`` checks."""
    return sorted({value for allowed in choices.values() for value in allowed})


def _given(args: argparse.Namespace, names: Iterable[str]) -> dict[str, Any]:
    """The options ``names`` the command line was given (not ``None``), under the keyword names they share."""
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}


def _add_data_options(parser: argparse.ArgumentParser) -> None:
    data = parser.add_argument_group("data (one of --dataset, --csv or --parquet)")
    source = data.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--dataset",
        choices=sorted(BUILTIN_DATASETS),
        metavar="NAME",
        help=f"a built-in dataset: {', '.join(sorted(BUILTIN_DATASETS))}",
    )
    source.add_argument("--csv", type=Path, metavar="PATH", help="your own table (CSV or Parquet)")
    source.add_argument(
        "--parquet",
        metavar="PATH|GLOB",
        help="Parquet files larger than memory, read block by block with Dask: a file, a folder or a glob such "
        "as 'data/*.parquet' (quote it). Needs --target and --feature-bound (and --target-bound for ridge): "
        "every row is divided by the public bounds and clipped (the paper's data-dependent scaling is not available "
        "out of core). Every row trains the model",
    )
    data.add_argument("--target", metavar="COL", help="with --csv or --parquet: the column to predict (required)")
    data.add_argument(
        "--task",
        choices=("ridge", "logistic"),
        help="with --csv or --parquet: ridge (numeric target) or logistic (two classes); default with --csv: "
        "logistic when a positive class is declared (--positive-class or the schema), else ridge (a private "
        "preparation reads nothing to choose it; with --preparation evaluation: logistic if the target has "
        "exactly two distinct values); with --parquet: ridge",
    )
    data.add_argument(
        "--features",
        type=_columns,
        metavar="COL,COL,...",
        help="with --csv or --parquet: feature columns (default: every usable column except the target)",
    )
    data.add_argument(
        "--positive-class",
        metavar="VALUE",
        help="with --csv or --parquet, logistic: the target value mapped to +1 (with --parquet the default maps "
        "1/True to +1 and −1/0/False to −1)",
    )
    data.add_argument(
        "--schema",
        type=Path,
        metavar="PATH",
        help='with --csv: declared metadata, a JSON (or YAML) file of per-column ranges, levels, "read": false '
        "and log1p, and the positive class; declared numbers cost no privacy (docs/data-preparation.md)",
    )
    data.add_argument(
        "--preparation",
        choices=PREPARATIONS,
        help="with --csv: 'private' estimates what the schema does not declare with charged mechanisms; "
        "'evaluation' reads the data without noise (every ε then excludes preparation) (default: private)",
    )
    data.add_argument(
        "--prep-epsilon",
        type=float,
        metavar="ε",
        help="with --csv: the private preparation's ε (default: 150 × the steps' total weight / n)",
    )
    data.add_argument(
        "--prep-delta",
        type=float,
        metavar="δ",
        help=f"with --csv: the private preparation's δ, for its level selections (default: {DEFAULT_PREP_DELTA:g})",
    )
    data.add_argument(
        "--noise-seed",
        type=int,
        metavar="N",
        help="with --csv or a real --dataset (diabetes, breast-cancer): seed of the preparation's noise, for a "
        "repeatable run, which is then not a private release (default: noise from the operating system, a fresh "
        "release each time)",
    )
    data.add_argument(
        "--log1p",
        type=_columns,
        default=[],
        metavar="COL,COL,...",
        help="with --csv: heavy-tailed feature columns to transform by log(1 + x) (docs/data-preparation.md)",
    )
    data.add_argument(
        "--log1p-target", action="store_true", help="with --csv, ridge: transform the target by log(1 + y)"
    )
    data.add_argument(
        "--scaling",
        choices=_any_preparation(SCALINGS),
        help="with --csv: 'ranges' divides rows by the sum of the columns' released half-ranges (private), "
        "'paper' by the data's largest row norm (evaluation only), 'clip' by --feature-bound/--target-bound "
        "and clips (default: ranges, or paper with --preparation evaluation; --parquet always clips)",
    )
    data.add_argument(
        "--missing",
        choices=_any_preparation(MISSING_CHOICES),
        help="with --csv: 'impute' fills a gap with the private mean (evaluation only: the training median or "
        "most frequent level); 'median' (a private median) or 'centre' (the range's centre); evaluation only: "
        "'drop' drops the row (default: impute)",
    )
    data.add_argument(
        "--max-levels",
        type=int,
        metavar="N",
        help=f"with --csv: one-hot encode a text column into at most N columns of 0/1, the rarest levels "
        f"grouped; 0 leaves text columns out (default: {DEFAULT_MAX_LEVELS})",
    )
    data.add_argument(
        "--center",
        action=argparse.BooleanOptionalAction,
        help="with --csv: subtract each column's mean, private (evaluation only: the training means); the models "
        "have no intercept (default: --center)",
    )
    data.add_argument(
        "--standardize",
        action=argparse.BooleanOptionalAction,
        help="with --csv: divide each numeric column by half its range (evaluation only: its training standard "
        "deviation) (default: --standardize)",
    )
    data.add_argument(
        "--feature-bound", type=float, metavar="B", help="with --scaling clip or --parquet: public bound on ‖x‖₁"
    )
    data.add_argument(
        "--target-bound", type=float, metavar="B", help="with --scaling clip or --parquet, ridge: public bound on |y|"
    )
    data.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="with --parquet: a running dask.distributed scheduler, tcp://host:port (needs the distributed "
        "package) (default: Dask's local threads)",
    )
    data.add_argument(
        "--test-size",
        type=float,
        metavar="SHARE",
        help=f"share of rows held out of the private algorithms (default: {DEFAULT_TEST_SIZE})",
    )
    data.add_argument(
        "--split-seed", type=int, metavar="N", help=f"seed of the train/test split (default: {DEFAULT_SPLIT_SEED})"
    )


def _add_algorithm_options(parser: argparse.ArgumentParser) -> None:
    algo = parser.add_argument_group(
        "algorithm (docs/mathematics.md; defaults: the paper's settings with the calibration that paid least)"
    )
    algo.add_argument("--lam", type=float, default=0.005, metavar="λ", help="regularisation λ > 0 (default: 0.005)")
    algo.add_argument(
        "--radius",
        type=float,
        metavar="R",
        help="a public bound R ≤ M on ‖θ‖, from domain knowledge, never from this data; the feasible set, "
        "the sensitivities and θ* then use R (default: none, R = M)",
    )
    algo.add_argument(
        "--radius-mode",
        choices=RADIUS_MODES,
        default=SearchOptions().radius_mode,
        help="the radius the methods run on: 'none' (M, or --radius), 'free' (R₀, a bound on ‖θ*‖ that holds for "
        "every dataset and reads none, or --radius if smaller), 'private' (a tighter radius below R₀ bought with a "
        "small part of the budget when a prediction from public quantities says it pays; derived) "
        f"(default: {SearchOptions().radius_mode})",
    )
    algo.add_argument(
        "--radius-epsilon",
        type=float,
        metavar="ε",
        help="with --radius-mode private: the radius's ε_R (default: chosen from public quantities)",
    )
    algo.add_argument(
        "--radius-beta",
        type=float,
        metavar="β",
        help="with --radius-mode private: the probability β < γ that the radius falls below ‖θ*‖ "
        "(default: chosen from public quantities)",
    )
    algo.add_argument(
        "--gamma", type=float, default=0.1, metavar="γ", help="failure probability γ in (0, 1) (default: 0.1)"
    )
    algo.add_argument(
        "--T",
        type=int,
        default=SearchOptions.T,
        metavar="N",
        help="privacy levels on the ε grid, ≥ 2 (default: %(default)s)",
    )
    algo.add_argument("--eps-min", type=float, metavar="ε", help="smallest ε of the grid (default: 1/n)")
    algo.add_argument(
        "--eps-max", type=float, metavar="ε", help="largest ε of the grid (default: 4E, E of the theory approach)"
    )
    algo.add_argument(
        "--spacing", choices=SPACINGS, default="geometric", help="spacing of the ε grid (default: geometric)"
    )
    algo.add_argument(
        "--generator",
        choices=sorted(GENERATORS),
        help="hypothesis generator (default: covariance for ridge, output for logistic)",
    )
    algo.add_argument(
        "--calibration",
        choices=sorted(CALIBRATIONS),
        default=SearchOptions.calibration,
        help="InteractiveAboveThreshold calibration: 'theorem' (Thm 3.2/3.4), 'paper-code' "
        "(the authors' code, behind the paper's plotted numbers) or an exact one that spends exactly γ: "
        "'exact', 'exact-opt', 'exact-paper', 'exact-paper-opt' (default: %(default)s, the cheapest measured)",
    )
    algo.add_argument(
        "--noise",
        choices=sorted(NOISES),
        default="laplace",
        help="noise of the hypotheses: 'laplace' (the paper's, pure ex-post privacy) or 'gaussian' "
        "(Brownian noise reduction, (ε, δ)-ex-post privacy; derived, consistent with Rogers et al. 2023; "
        "nr and doubling only) (default: laplace)",
    )
    algo.add_argument(
        "--fallback",
        choices=FALLBACKS,
        default=SearchOptions.fallback,
        help="what a run whose test never passes releases: 'nothing' (charged its declared top ε) or 'exact' "
        "(the paper's: the exact, non-private θ* at ε = ∞; synthetic data only) (default: %(default)s)",
    )
    algo.add_argument(
        "--delta",
        type=float,
        default=DEFAULT_DELTA,
        metavar="δ",
        help="δ of the (ε, δ) guarantees: of --noise gaussian (in (0, 1)) and of the Gibbs posterior (derived; "
        f"0 asks it for pure ε on ridge) (default: {DEFAULT_DELTA:g})",
    )
    algo.add_argument(
        "--test-budget",
        type=float,
        metavar="ε",
        help="with --kappa: the most the private test may be predicted to cost at the released α; below the bound "
        f"on R(0) this implies, the data show no signal a private model could keep (default: {DEFAULT_TEST_BUDGET:g})",
    )
    algo.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="seed of the runs, for a repeatable run (default: 0 on built-in synthetic data, a simulation; noise "
        f"from the operating system on real data, where a seed makes the output a '{REPEATABLE}')",
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``accfirst`` parser with its ``sweep`` and ``run`` subcommands."""
    parser = _Parser(
        prog=PROG,
        description="Accuracy-first differential privacy (Ligett et al., NeurIPS 2017) from the command line.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="{sweep,run,counts}")
    sweep_parser = commands.add_parser(
        "sweep",
        help="run every method over a grid of α; write results.csv and report.html",
        description="Reproduce the paper's Figures 1–4 on a dataset: every method × α × trial, "
        "written as a tidy results.csv and an offline report.html.",
    )
    _add_data_options(sweep_parser)
    _add_algorithm_options(sweep_parser)
    runs = sweep_parser.add_argument_group("sweep")
    runs.add_argument(
        "--methods",
        type=_methods,
        default=list(paper_methods()),
        metavar="M,M,...",
        help=f"methods among {','.join(METHODS)} (default: the paper's {','.join(paper_methods())})",
    )
    target = runs.add_mutually_exclusive_group()
    target.add_argument(
        "--alphas",
        metavar="START:STOP:STEP|A,A,...",
        help=f"requested excess risks α: a range with STOP included, or a list (default: {PAPER_ALPHAS_TEXT})",
    )
    target.add_argument(
        "--kappa",
        metavar="K,K,...",
        help="relative targets instead of α: each κ in (0, 1) asks the model to keep at least 1 − κ of what the "
        "best model gains over predicting nothing (excess risk ≤ κ·R(0)); each run first buys a private lower "
        "bound of R(0) and reports its ε beside the others (derived)",
    )
    runs.add_argument("--trials", type=int, default=20, metavar="N", help="runs per method and α (default: 20)")
    runs.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="processes to use; 1 runs in this process (default: the number of CPUs)",
    )
    runs.add_argument(
        "--out",
        type=Path,
        default=Path("out"),
        metavar="DIR",
        help="folder for results.csv and report.html (created if missing; default: out)",
    )

    run_parser = commands.add_parser(
        "run",
        help="one run of one method at one α; print its RunResult",
        description="One accuracy-first run; prints its RunResult (ex-post ε split into testing and generation).",
    )
    _add_data_options(run_parser)
    _add_algorithm_options(run_parser)
    one = run_parser.add_argument_group("run")
    one.add_argument(
        "--method",
        choices=list(METHODS),
        default=NoiseReduction.key,
        help=f"the method (default: {NoiseReduction.key})",
    )
    target = one.add_mutually_exclusive_group(required=True)
    target.add_argument("--alpha", type=float, metavar="α", help="requested excess risk α > 0")
    target.add_argument(
        "--kappa",
        type=float,
        metavar="κ",
        help="a relative target instead of α: keep at least 1 − κ of what the best model gains over predicting "
        "nothing (excess risk ≤ κ·R(0)), κ in (0, 1); the run first buys a private lower bound of R(0) (derived)",
    )
    one.add_argument(
        "--trial",
        type=int,
        default=0,
        metavar="N",
        help="trial index: the run equals row N of a sweep with the same seed (default: 0)",
    )
    _add_counts_parser(commands)
    return parser


def _range(text: str) -> tuple[float, float]:
    try:
        low, high = (float(part) for part in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LOW:HIGH, e.g. 0:100; got {text!r}") from None
    return low, high


def _add_counts_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    parser = commands.add_parser(
        "counts",
        help="release counts to a relative error under one (ε, δ) budget; write results.csv and report.html",
        description="Release as many counts as the budget allows, each within relative error α w.p. ≥ 1 − β, "
        "by Brownian noise reduction and by doubling (derived, consistent with Rogers et al. 2023).",
    )
    data = parser.add_argument_group("counts (one of --synthetic or --csv)")
    source = data.add_mutually_exclusive_group(required=True)
    source.add_argument("--synthetic", type=int, metavar="N", help="N counts, log-uniform on [--low, --high]")
    source.add_argument("--csv", type=Path, metavar="PATH", help="a table (CSV or Parquet) to count rows of")
    data.add_argument("--low", type=float, default=1e2, help="with --synthetic: smallest count (default: 100)")
    data.add_argument("--high", type=float, default=1e5, help="with --synthetic: largest count (default: 100000)")
    data.add_argument("--column", metavar="COL", help="with --csv: the column whose rows are counted (required)")
    data.add_argument(
        "--categories",
        type=_columns,
        metavar="A,B,...",
        help="with --csv: the categories to count, in this order (default: the column's distinct values, "
        "sorted; that list reads the data and is not private)",
    )
    data.add_argument("--bins", type=int, metavar="N", help="with --csv: count a numeric column in N equal bins")
    data.add_argument(
        "--range",
        type=_range,
        metavar="LOW:HIGH",
        help="with --bins: public bounds of the bins (default: the column's min and max, which is not private)",
    )
    data.add_argument(
        "--schema",
        type=Path,
        metavar="PATH",
        help="with --csv: declared metadata (JSON or YAML): the column's declared levels are the categories and "
        "its declared range the bins' bounds, unless --categories or --range say otherwise",
    )
    release = parser.add_argument_group("release (derived, consistent with Rogers et al. 2023)")
    release.add_argument("--rel-error", type=float, required=True, metavar="α", help="target relative error α > 0")
    release.add_argument("--epsilon", type=float, default=1.0, metavar="ε", help="the budget's ε (default: 1)")
    release.add_argument(
        "--delta", type=float, default=DEFAULT_DELTA, metavar="δ", help=f"the budget's δ (default: {DEFAULT_DELTA:g})"
    )
    release.add_argument(
        "--methods",
        type=_methods,
        default=list(COUNT_METHODS),
        metavar="M,M",
        help=f"methods among {','.join(COUNT_METHODS)} (default: both)",
    )
    release.add_argument(
        "--beta", type=float, default=0.05, metavar="β", help="per-count failure probability β (default: 0.05)"
    )
    release.add_argument(
        "--cap",
        type=float,
        default=0.05,
        metavar="κ",
        help="share κ of the budget one count may use, in (0, 1]: a small κ stops one small count from "
        "eating the budget, a large κ certifies smaller counts (default: 0.05)",
    )
    release.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="seed of the release, for a repeatable run (default: 0 for --synthetic counts, a simulation; noise from "
        f"the operating system for counts of --csv, where a seed makes the output a '{REPEATABLE}')",
    )
    release.add_argument(
        "--out",
        type=Path,
        default=Path("out"),
        metavar="DIR",
        help="folder for results.csv and report.html (created if missing; default: out)",
    )


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
    if settings.kappas:
        words += ["--kappa", ",".join(repr(k) for k in settings.kappas)]
        if settings.options.test_budget != DEFAULT_TEST_BUDGET:
            words += ["--test-budget", repr(settings.options.test_budget)]
    else:
        words += ["--alphas", alphas_text or ",".join(repr(a) for a in settings.alphas)]
    words += ["--methods", ",".join(settings.methods), "--trials", str(settings.trials)]
    options = settings.options
    words += ["--lam", repr(settings.lam), "--gamma", repr(settings.gamma), "--T", str(options.T)]
    if settings.radius is not None:
        words += ["--radius", repr(settings.radius)]
    words += ["--calibration", options.calibration, "--seed", str(settings.seed)]
    if options.generator is not None:
        words += ["--generator", options.generator]
    if options.eps_min is not None:
        words += ["--eps-min", repr(options.eps_min)]
    if options.eps_max is not None:
        words += ["--eps-max", repr(options.eps_max)]
    if options.spacing != "geometric":
        words += ["--spacing", options.spacing]
    if options.noise != "laplace":
        words += ["--noise", options.noise]
    if options.fallback != SearchOptions.fallback:
        words += ["--fallback", options.fallback]
    if options.radius_mode != SearchOptions().radius_mode:
        words += ["--radius-mode", options.radius_mode]
    for flag, value in (("--radius-epsilon", options.radius_epsilon), ("--radius-beta", options.radius_beta)):
        if value is not None:
            words += [flag, repr(value)]
    if options.noise != "laplace" or options.delta != DEFAULT_DELTA:
        words += ["--delta", repr(options.delta)]
    return shlex.join(words)


def _seed(args: argparse.Namespace, simulation: bool) -> tuple[int, str]:
    """The seed of a command's randomness and how its output names it (issue: no public seed on a release).

    A simulation (data generated from public parameters) is repeatable by default (seed 0). On real
    data the randomness comes from the operating system unless a seed is given, and then every
    output says it is a repeatable run, not a private release.
    """
    if args.seed is not None:
        seed = validate_count("--seed", args.seed, 0)
        return seed, str(seed) if simulation else f"{seed} ({REPEATABLE})"
    if simulation:
        return 0, "0"
    return release_seed(None), "operating-system entropy (a private release; not shown, not repeatable)"


def _problem(args: argparse.Namespace) -> tuple[Problem, str, list[str]]:
    """The ERM problem of ``--dataset``, ``--csv`` or ``--parquet``, its task and preparation steps
    (docs/mathematics.md#setting-and-notation, docs/mathematics.md#the-two-learning-problems,
    docs/data-preparation.md#scaling-into-the-unit-ball, docs/mathematics.md#preparing-the-data-privately); the last
    step is the preparation's cost."""
    if args.parquet is not None:
        return _parquet_problem(args)
    if args.scheduler is not None:
        _fail("--scheduler only applies with --parquet")
    data = _load_data(args)
    return build_problem(data, args.lam, args.radius), data.task, list(data.report.steps)


def _load_data(args: argparse.Namespace) -> PreparedData:
    """The prepared dataset of ``--dataset`` or ``--csv`` (docs/mathematics.md#setting-and-notation,
    docs/data-preparation.md#scaling-into-the-unit-ball)."""
    test_size = DEFAULT_TEST_SIZE if args.test_size is None else args.test_size
    seed = DEFAULT_SPLIT_SEED if args.split_seed is None else args.split_seed
    if args.dataset is not None:
        csv_only = [flag for flag, value in _csv_options(args).items() if value]
        if csv_only:
            verb = "applies" if len(csv_only) == 1 else "apply"
            _fail(f"{', '.join(csv_only)} only {verb} with --csv; built-in datasets come prepared")
        if args.noise_seed is not None and BUILTIN_DATASETS[args.dataset].public:
            _fail(f"--noise-seed does not apply to {args.dataset}: it is generated from public parameters, no noise")
        return load_builtin(args.dataset, test_size=test_size, seed=seed, noise_seed=args.noise_seed)
    if args.target is None:
        _fail("--csv needs --target COL, the column to predict")
    table = _read_table(args.csv, args.target, "--target")
    private = (args.preparation or PRIVATE_MODE) == PRIVATE_MODE
    # A private preparation reads nothing to choose the task: a declared positive class means a class target.
    schema = _schema(args.schema)
    declared = args.positive_class is not None or (schema is not None and schema.positive_class is not None)
    task = args.task or (
        ("logistic" if declared else "ridge") if private else guess_task(table[args.target], read_values=True)
    )
    return from_frame(
        table,
        target=args.target,
        task=task,
        schema=schema,
        log1p_columns=args.log1p,
        test_size=test_size,
        seed=seed,
        **_given(args, (*_FRAME_OPTIONS, *PREPARATION_OPTIONS)),
    )


def _schema(path: Path | None) -> Schema | None:
    """The declared metadata of ``--schema`` (``None`` without it)."""
    return None if path is None else load_schema(path)


def _parquet_problem(args: argparse.Namespace) -> tuple[Problem, str, list[str]]:
    """The problem of ``--parquet`` files, built block by block with Dask (``accfirst.scale``)."""
    if args.scaling == "paper":
        _fail(f"--scaling paper does not apply with --parquet: {OUT_OF_CORE_SCALING}")
    preparation = {
        **_preparation_flags(args),
        "--noise-seed": args.noise_seed is not None,
        "--test-size": args.test_size is not None,
        "--split-seed": args.split_seed is not None,
    }
    refused = [flag for flag, value in preparation.items() if value]
    if refused:
        _fail(
            f"{', '.join(refused)} {'does' if len(refused) == 1 else 'do'} not apply with --parquet: out of core "
            "nothing reads the data to prepare it (write the files prepared), and every row trains the model"
        )
    if args.target is None:
        _fail("--parquet needs --target COL, the column to predict")
    from accfirst.scale import problem_from_parquet  # Dask, only for the command that needs it

    task = args.task or "ridge"
    problem = problem_from_parquet(
        args.parquet,
        args.target,
        args.features,
        task=task,
        **_given(args, ("lam", "feature_bound", "target_bound", "radius", "scheduler", "positive_class")),
    )
    target = f" and the target by the stated bound {args.target_bound:g}" if task == "ridge" else ""
    steps = [
        f"read {problem.n:,} rows of {problem.p} features from the Parquet files {args.parquet} block by block "
        f"(Dask, {args.scheduler or 'local threads'}); every row trains the model (no held-out rows)",
        f"divided every feature by the stated bound {args.feature_bound:g}{target}, then clipped rows to ‖x‖₁ ≤ 1"
        + (" (and y to [−1, 1])" if task == "ridge" else "")
        + f" (public bounds: this step reads nothing from the data); {OUT_OF_CORE_SCALING}",
        "preparation: ε = 0 (public bounds only: nothing read from the data)",
    ]
    return problem, task, steps


def _read_table(path: Path, column: str, flag: str) -> pd.DataFrame:
    """The table at ``path`` (CSV or Parquet), which must have ``column`` (given by option ``flag``)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        _fail(f"cannot read {path}: {exc.strerror or exc}")
    table = read_upload(raw, path.name)
    if column not in table.columns:
        _fail(f"{flag} {column!r} is not a column of {path.name}; columns: {', '.join(map(str, table.columns))}")
    return table


def _csv_options(args: argparse.Namespace) -> dict[str, object]:
    return {
        "--target": args.target,
        "--task": args.task,
        "--features": args.features,
        "--positive-class": args.positive_class,
        "--log1p": args.log1p,
        "--log1p-target": args.log1p_target,
        "--scaling clip": args.scaling == "clip",
        "--feature-bound": args.feature_bound,
        "--target-bound": args.target_bound,
        **_preparation_flags(args),
    }


def _preparation_flags(args: argparse.Namespace) -> dict[str, object]:
    """The preparation's options as given (a falsy value: not given), for the commands that refuse or read them."""
    return {
        "--log1p": args.log1p,
        "--log1p-target": args.log1p_target,
        "--missing": args.missing is not None,
        "--max-levels": args.max_levels is not None,
        "--center/--no-center": args.center is not None,
        "--standardize/--no-standardize": args.standardize is not None,
        "--schema": args.schema is not None,
        "--preparation": args.preparation is not None,
        "--prep-epsilon": args.prep_epsilon is not None,
        "--prep-delta": args.prep_delta is not None,
    }


def _search_options(args: argparse.Namespace) -> SearchOptions:
    """The search options given on the command line (the same names as ``SearchOptions``; unset ones default)."""
    if args.kappa is None and args.test_budget is not None:
        _fail("--test-budget only applies with --kappa")
    return SearchOptions(**_given(args, (f.name for f in fields(SearchOptions))))


def build_problem(data: PreparedData, lam: float, radius: float | None = None) -> Problem:
    """The ERM problem of the training part (docs/mathematics.md#the-two-learning-problems,
    docs/mathematics.md#a-public-norm-bound): ridge or logistic by the data's task."""
    return prepared_problem(data, lam, radius)


class _ProgressLine:
    """``done/total`` runs on stderr: one line redrawn on a terminal, a line per 10% otherwise."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.started = time.perf_counter()
        self.redraw = stream.isatty()
        self.last_tenth = -1

    def __call__(self, done: int, total: int) -> None:
        elapsed = time.perf_counter() - self.started
        left = elapsed * (total - done) / done if done else math.nan
        text = f"{PROG} sweep: {done}/{total} runs ({done / total:.0%}), {elapsed:.0f} s elapsed, ~{left:.0f} s left"
        if self.redraw:
            self.stream.write(f"\r{text}\033[K" + ("\n" if done == total else ""))
        elif done * 10 // total > self.last_tenth:
            self.last_tenth = done * 10 // total
            self.stream.write(text + "\n")
        self.stream.flush()


def _interrupt_flag() -> tuple[Callable[[], bool], Callable[[], object]]:
    """A flag that Ctrl-C sets (so a sweep stops cleanly) and a function that restores the handler."""
    hits: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: hits.append(signum))
    return (lambda: bool(hits)), (lambda: signal.signal(signal.SIGINT, previous))


def _make_out_folder(out: Path) -> None:
    """Create ``--out`` and check it is writable, before any work starts."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".accfirst-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        _fail(f"cannot write to --out {out}: {exc.strerror or exc}")


def _targets(args: argparse.Namespace) -> tuple[list[float], list[RelativeTarget]]:
    """The sweep's α values, or its relative targets (``--kappa``), never both."""
    if args.kappa is not None:
        return [], [RelativeTarget(kappa) for kappa in parse_kappas(args.kappa)]
    return parse_alphas(args.alphas or PAPER_ALPHAS_TEXT), []


def _sweep_command(args: argparse.Namespace, argv: Sequence[str]) -> int:
    alphas, kappas = _targets(args)
    options = _search_options(args)
    validate_methods(args.methods, options)
    validate_gamma(args.gamma)
    for name in ("trials", "workers"):
        validate_count(f"--{name}", getattr(args, name), 1)
    _make_out_folder(args.out)
    problem, task, steps = _problem(args)
    seed, seed_text = _seed(args, problem.prep_mode == PUBLIC_MODE)
    print(f"{PROG}: {task} problem, n = {problem.n}, p = {problem.p}; {steps[-1]}", file=sys.stderr)
    if REPEATABLE in seed_text:
        print(f"{PROG}: {REPEATABLE}", file=sys.stderr)
    started = time.perf_counter()
    stopped, restore = _interrupt_flag()
    try:
        frame = sweep(
            problem,
            alphas,
            args.gamma,
            args.methods,
            args.trials,
            seed,
            workers=args.workers,
            progress=_ProgressLine(sys.stderr),
            should_stop=stopped,
            kappas=kappas,
            **options.to_dict(),
        )
    finally:
        restore()
    seconds = time.perf_counter() - started
    total = (len(alphas) + len(kappas)) * len(args.methods) * args.trials
    settings = {
        "command": " ".join([PROG, *argv]),
        "data": args.dataset or str(args.csv or args.parquet),
        "task": task,
        "n (training rows)": problem.n,
        "p (features)": problem.p,
        "preparation": steps[-1].removeprefix("preparation: "),
        "λ": args.lam,
        "public radius R": "none (R = M)" if args.radius is None else args.radius,
        "radius mode": args.radius_mode,
        "γ": args.gamma,
        "T": args.T,
        "generator": frame["generator"].iloc[0] if len(frame) else args.generator,
        "calibration": args.calibration,
        "noise": args.noise
        + (f" (δ = {args.delta:g}; derived, consistent with Rogers et al. 2023)" if args.noise == "gaussian" else ""),
        "δ of the Gibbs posterior": args.delta if "gibbs" in args.methods else "not run",
        "methods": ", ".join(args.methods),
        **_target_settings(args, alphas, kappas),
        "trials": args.trials,
        "seed": seed_text,
        "runs": f"{len(frame)} of {total}" + (" (interrupted)" if len(frame) < total else ""),
    }
    frame.to_csv(args.out / "results.csv", index=False)
    if len(frame):
        report = html_relative_report if kappas else html_report
        (args.out / "report.html").write_text(report(frame, settings, steps), encoding="utf-8")
    print(f"wrote {args.out / 'results.csv'} ({len(frame)} runs) and {args.out / 'report.html'}")
    # How long the runs took depends on the data: said on the terminal only, never written to the results.
    print(f"{PROG}: {seconds:.1f} s on {args.workers} worker(s) (a local timing, not in the results)", file=sys.stderr)
    if len(frame) < total:
        print(f"{PROG}: interrupted after {len(frame)} of {total} runs", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0


def _target_settings(args: argparse.Namespace, alphas: list[float], kappas: list[RelativeTarget]) -> dict[str, str]:
    """The report's rows about the target: the α grid, or the relative targets and what they cost."""
    if not kappas:
        return {"α": f"{args.alphas or PAPER_ALPHAS_TEXT} ({len(alphas)} values)"}
    shares = ", ".join(f"{target.share_kept:.0%}" for target in kappas)
    return {
        "target": f"relative: κ = {args.kappa} (keep at least {shares} of what the best model gains over predicting "
        "nothing); α = κ·Ŝ, Ŝ a private lower bound of R(0) bought in each run (derived)",
        "test budget": f"ε = {SearchOptions.test_budget if args.test_budget is None else args.test_budget:g} "
        "(a bound on R(0) below what this allows: no signal)",
    }


def _counts_to_release(args: argparse.Namespace) -> tuple[pd.Series, str]:
    """The counts of ``--synthetic`` or ``--csv`` and a line saying where they came from."""
    if args.csv is None:
        given = (("--column", args.column), ("--categories", args.categories), ("--bins", args.bins))
        for flag, value in (*given, ("--schema", args.schema)):
            if value is not None:
                _fail(f"{flag} only applies with --csv")
        validate_count("--synthetic", args.synthetic, 1)
        values = log_uniform_counts(args.synthetic, args.low, args.high, rng=0 if args.seed is None else args.seed)
        return pd.Series(values), f"{args.synthetic} synthetic counts, log-uniform on [{args.low:g}, {args.high:g}]"
    if args.column is None:
        _fail("--csv needs --column COL, the column whose rows are counted")
    if args.bins is not None and args.categories is not None:
        _fail("--bins and --categories do not go together: bin a numeric column or count categories")
    if args.range is not None and args.bins is None:
        _fail("--range only applies with --bins")
    column = _read_table(args.csv, args.column, "--column")[args.column]
    declared = (_schema(args.schema) or Schema()).column(args.column)
    if args.bins is not None:
        bounds = args.range or declared.range
        private = "" if bounds else " (range read from the data: not private)"
        return histogram_counts(column, args.bins, bounds), f"{args.column} in {args.bins} bins{private}"
    categories = args.categories or (None if declared.levels is None else list(declared.levels))
    private = "" if categories else " (category list read from the data: not private)"
    return category_counts(column, categories), f"rows per category of {args.column}{private}"


def _counts_command(args: argparse.Namespace, argv: Sequence[str]) -> int:
    counts, source = _counts_to_release(args)
    seed, seed_text = _seed(args, args.csv is None)
    _make_out_folder(args.out)
    frame = compare_counts(counts, args.rel_error, args.epsilon, args.delta, args.methods, args.beta, args.cap, seed)
    summary = summarise_counts(frame)
    settings = {
        "command": " ".join([PROG, *argv]),
        "counts": source,
        "budget": f"(ε, δ) = ({args.epsilon:g}, {args.delta:g}); derived, consistent with Rogers et al. 2023",
        "relative error α": args.rel_error,
        "β (per count)": args.beta,
        "κ (per-count cap)": args.cap,
        "seed": seed_text,
    }
    intro = (
        "<p>Counts released in order, each within relative error α with probability ≥ 1 − β, until the "
        "privacy filter refuses (derived, consistent with Rogers et al. 2023). The whole release is "
        f"(ε, δ)-DP with δ = {args.delta:g}. True counts and realised errors are evaluation only, not private.</p>"
    )
    frame.to_csv(args.out / "results.csv", index=False)
    page = html_page(
        "accfirst counts report",
        "Relative-error counts under one budget",
        intro,
        settings,
        "Counts certified per method",
        summary,
        count_figures(frame, args.rel_error),
    )
    (args.out / "report.html").write_text(page, encoding="utf-8")
    print(summary.to_string(index=False))
    print(f"wrote {args.out / 'results.csv'} ({len(frame)} rows) and {args.out / 'report.html'}")
    return 0


def _run_command(args: argparse.Namespace) -> int:
    validate_count("--trial", args.trial, 0)
    options = _search_options(args)
    problem, _, steps = _problem(args)
    seed, seed_text = _seed(args, problem.prep_mode == PUBLIC_MODE)
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
        + _accuracy_line(result)
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


def _accuracy_line(result: RunResult) -> str:
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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m accfirst``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    try:
        if args.command == "sweep":
            return _sweep_command(args, argv)
        if args.command == "counts":
            return _counts_command(args, argv)
        return _run_command(args)
    except AccFirstError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
