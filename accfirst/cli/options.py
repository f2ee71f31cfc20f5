"""The command line's option tables: the data, the algorithm, and how a table becomes argparse options
(docs/mathematics.md, docs/data-preparation.md).

An option is one ``Option`` row in a ``Group`` table; a ``Subcommand`` lists the groups it takes
(``run`` and ``sweep`` share ``DATA`` and ``ALGORITHM``), so a new option is one more row.
Defaults are the package's own (``SearchOptions``, the preparation's), never restated.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from accfirst.cli.output import fail
from accfirst.datasets import BUILTIN_DATASETS
from accfirst.datasets.prepare.budget import DEFAULT_PREP_DELTA, DEFAULT_TABLE_BUDGET, PREP_SHARE
from accfirst.datasets.prepared import PREPARATIONS
from accfirst.datasets.preprocess import DEFAULT_MAX_LEVELS, MISSING_CHOICES, SCALINGS
from accfirst.erm.generators import GENERATORS, NOISES
from accfirst.mechanisms.brownian import DEFAULT_DELTA
from accfirst.mechanisms.calibration import CALIBRATIONS
from accfirst.methods.grid import SPACINGS
from accfirst.methods.options import AUTO_LAM, DEFAULT_LAM, DEFAULT_TEST_BUDGET, FALLBACKS, RADIUS_MODES, SearchOptions
from accfirst.methods.pipeline import GRID_RADIUS
from accfirst.validation import REPEATABLE

DEFAULT_TEST_SIZE = 0.2
DEFAULT_SPLIT_SEED = 0
DEFAULT_GAMMA = 0.1


@dataclass(frozen=True)
class Option:
    """One option: its flag, its help, and what else argparse's ``add_argument`` is told (type, default, …)."""

    flag: str
    help: str
    settings: Mapping[str, Any] = field(default_factory=dict)


def option(flag: str, help: str, **settings: Any) -> Option:
    """An ``Option`` row: ``settings`` are ``add_argument``'s keywords (``type``, ``default``, ``metavar``, …)."""
    return Option(flag, help, settings)


@dataclass(frozen=True)
class OneOf:
    """Options that exclude each other; with ``required`` one of them must be given."""

    options: tuple[Option, ...]
    required: bool = False


@dataclass(frozen=True)
class Group:
    """A titled table of options, in the order ``--help`` lists them."""

    title: str
    rows: tuple[Option | OneOf, ...]


@dataclass(frozen=True)
class Subcommand:
    """A subcommand: its name, its help, its option tables (made with the parser) and the command it runs."""

    name: str
    help: str
    description: str
    options: Callable[[], tuple[Group, ...]]
    command: Callable[[argparse.Namespace, list[str]], int]

    def add_to(self, commands: argparse._SubParsersAction[Any]) -> None:
        """Its parser among ``commands``, with every option of its tables."""
        parser = commands.add_parser(self.name, help=self.help, description=self.description)
        add_groups(parser, self.options())


def add_groups(parser: argparse.ArgumentParser, groups: Iterable[Group]) -> None:
    """Every option of ``groups`` on ``parser``, each group under its title."""
    for group in groups:
        section = parser.add_argument_group(group.title)
        for row in group.rows:
            if isinstance(row, OneOf):
                exclusive = section.add_mutually_exclusive_group(required=row.required)
                for one in row.options:
                    exclusive.add_argument(one.flag, help=one.help, **one.settings)
            else:
                section.add_argument(row.flag, help=row.help, **row.settings)


def names(text: str) -> list[str]:
    """``A,B,C`` as ``["A", "B", "C"]`` (blanks dropped): columns, categories, methods."""
    return [name.strip() for name in text.split(",") if name.strip()]


def value_range(text: str) -> tuple[float, float]:
    """``LOW:HIGH`` as two numbers."""
    try:
        low, high = (float(part) for part in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LOW:HIGH, e.g. 0:100; got {text!r}") from None
    return low, high


def column_range(text: str) -> tuple[str, tuple[float, float]]:
    """``COL=LOW:HIGH`` as a column and its two bounds (``from_frame`` checks the column and the order)."""
    name, equals, bounds = text.rpartition("=")
    if not equals or not name.strip():
        raise argparse.ArgumentTypeError(f"expected COL=LOW:HIGH, e.g. age=18:100; got {text!r}")
    return name.strip(), value_range(bounds)


def given(args: argparse.Namespace, keys: Iterable[str]) -> dict[str, Any]:
    """The options ``keys`` the command line was given (not ``None``), under the keyword names they share."""
    return {key: getattr(args, key) for key in keys if getattr(args, key) is not None}


def search_options(args: argparse.Namespace) -> SearchOptions:
    """The search options a command's parser has and its command line gave (the same names as ``SearchOptions``; unset
    ones default). The grid of λ is the command's to set (``--lam``)."""
    if args.kappa is None and args.test_budget is not None:
        fail("--test-budget only applies with --kappa")
    return SearchOptions(**given(args, (f.name for f in fields(SearchOptions) if hasattr(args, f.name))))


def lam_value(text: str) -> float | str:
    """``--lam``: a number, or ``auto`` (λ chosen privately from a public grid)."""
    if text == AUTO_LAM:
        return AUTO_LAM
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0 or {AUTO_LAM!r}; got {text!r}") from None


def fixed_lam(args: argparse.Namespace, why: str) -> float:
    """The one λ a command runs at: ``--lam``'s number, or ``DEFAULT_LAM``; ``--lam auto`` fails, saying ``why``."""
    if args.lam == AUTO_LAM:
        fail(f"--lam auto chooses λ under the private test of a target in R² or accuracy; {why}")
    return DEFAULT_LAM if args.lam is None else float(args.lam)


def lambda_options(
    args: argparse.Namespace, options: SearchOptions, certified: bool, why: str
) -> tuple[SearchOptions, float]:
    """The options with the grid of λ, and the λ the problem is built at.

    Toward a target in R² or accuracy (``certified``): ``--lam auto`` or none chooses λ privately from the default grid
    (docs/mathematics.md#choosing-λ-under-the-guarantee), a number is that λ alone, and ``--radius`` fails. Toward α or
    κ: the one λ of ``fixed_lam`` (``why`` says what to give instead of auto), and ``--ceiling`` fails.
    """
    if not certified:
        if args.ceiling is not None:
            fail("--ceiling only applies with a target in R² or accuracy (--r2, --accuracy, or none: the default)")
        return options, fixed_lam(args, why)
    if args.radius is not None:
        fail(f"--radius applies with --alpha or --kappa: {GRID_RADIUS}")
    if args.lam is None or args.lam == AUTO_LAM:
        return replace(options, lambdas=None), DEFAULT_LAM
    return replace(options, lambdas=(args.lam,)), float(args.lam)


def _any_preparation(choices: Mapping[str, Sequence[str]]) -> list[str]:
    """Every value some preparation allows (``choices``: preparation → its values), sorted; ``from_frame`` checks."""
    return sorted({value for allowed in choices.values() for value in allowed})


# The most a run toward a target in R² or accuracy may spend (``run`` and ``sweep``).
CEILING = option(
    "--ceiling",
    "with a target in R² or accuracy: the most a run may spend beyond preparing the data; a target no table of this "
    "size could meet within it is refused before the rows are prepared, spending nothing "
    f"(default: {SearchOptions.ceiling:g})",
    type=float,
    metavar="ε",
)
# A public bound stated on the command line (of ‖x‖₁, of |y|).
PUBLIC_BOUND: dict[str, Any] = {"type": float, "metavar": "B"}
# Where the commands that write files write them.
OUT = option(
    "--out",
    "folder for results.csv and report.html (created if missing; default: out)",
    type=Path,
    default=Path("out"),
    metavar="DIR",
)

DATA = Group(
    "data (one of --dataset, --csv or --parquet)",
    (
        OneOf(
            (
                option(
                    "--dataset",
                    f"a built-in dataset: {', '.join(sorted(BUILTIN_DATASETS))}",
                    choices=sorted(BUILTIN_DATASETS),
                    metavar="NAME",
                ),
                option("--csv", "your own table (CSV or Parquet)", type=Path, metavar="PATH"),
                option(
                    "--parquet",
                    "Parquet files larger than memory, read block by block with Dask: a file, a folder or a glob such "
                    "as 'data/*.parquet' (quote it). Needs --target and --feature-bound (and --target-bound for "
                    "ridge): every row is divided by the public bounds and clipped (the paper's data-dependent scaling "
                    "is not available out of core). Every row trains the model",
                    metavar="PATH|GLOB",
                ),
            ),
            required=True,
        ),
        option("--target", "with --csv or --parquet: the column to predict (required)", metavar="COL"),
        option(
            "--task",
            "with --csv or --parquet: ridge (numeric target) or logistic (two classes); default with --csv: "
            "logistic when a positive class is declared (--positive-class or the schema), else ridge (a private "
            "preparation reads nothing to choose it; with --preparation evaluation: logistic if the target has "
            "exactly two distinct values); with --parquet: ridge",
            choices=("ridge", "logistic"),
        ),
        option(
            "--features",
            "with --csv or --parquet: feature columns (default: every usable column except the target)",
            type=names,
            metavar="COL,COL,...",
        ),
        option(
            "--positive-class",
            "with --csv or --parquet, logistic: the target value mapped to +1 (with --parquet the default maps "
            "1/True to +1 and −1/0/False to −1)",
            metavar="VALUE",
        ),
        option(
            "--schema",
            'with --csv: declared metadata, a JSON (or YAML) file of per-column ranges, levels, "read": false '
            "and log1p, and the positive class; declared numbers cost no privacy (docs/data-preparation.md)",
            type=Path,
            metavar="PATH",
        ),
        option(
            "--range",
            "with --csv: a declared range, COL=LOW:HIGH in the column's own units (repeat for more columns); "
            'public, so it costs its column no ε; the short form of the schema\'s "range"',
            type=column_range,
            action="append",
            dest="ranges",
            metavar="COL=LOW:HIGH",
        ),
        option(
            "--preparation",
            "with --csv: 'private' estimates what the schema does not declare with charged mechanisms; "
            "'evaluation' reads the data without noise (every ε then excludes preparation) (default: private)",
            choices=PREPARATIONS,
        ),
        option(
            "--prep-epsilon",
            "with --csv: the private preparation's ε (default: 150 × the steps' total weight / n, at most "
            f"{PREP_SHARE * 100:g}%% of --budget)",
            type=float,
            metavar="ε",
        ),
        option(
            "--budget",
            "with --csv: the ε you mean to spend on the table in all, preparation included (public); by default the "
            f"preparation takes at most {PREP_SHARE * 100:g}%% of it (default: {DEFAULT_TABLE_BUDGET:g})",
            type=float,
            metavar="ε",
        ),
        option(
            "--prep-delta",
            f"with --csv: the private preparation's δ, for its level selections (default: {DEFAULT_PREP_DELTA:g})",
            type=float,
            metavar="δ",
        ),
        option(
            "--noise-seed",
            "with --csv or a real --dataset (diabetes, breast-cancer): seed of the preparation's noise, for a "
            "repeatable run, which is then not a private release (default: noise from the operating system, a fresh "
            "release each time)",
            type=int,
            metavar="N",
        ),
        option(
            "--log1p",
            "with --csv: heavy-tailed feature columns to transform by log(1 + x) (docs/data-preparation.md)",
            type=names,
            default=[],
            metavar="COL,COL,...",
        ),
        option("--log1p-target", "with --csv, ridge: transform the target by log(1 + y)", action="store_true"),
        option(
            "--scaling",
            "with --csv: 'ranges' divides rows by the sum of the columns' released half-ranges (private), "
            "'paper' by the data's largest row norm (evaluation only), 'clip' by --feature-bound/--target-bound "
            "and clips (default: ranges, or paper with --preparation evaluation; --parquet always clips)",
            choices=_any_preparation(SCALINGS),
        ),
        option(
            "--missing",
            "with --csv: 'impute' fills a gap with the column's centre (evaluation only: the training median or "
            "most frequent level); 'median' (a private median) or 'centre' (the range's centre), the same number "
            "for a column whose range is private; evaluation only: 'drop' drops the row (default: impute)",
            choices=_any_preparation(MISSING_CHOICES),
        ),
        option(
            "--max-levels",
            f"with --csv: one-hot encode a text column into at most N columns of 0/1, the rarest levels "
            f"grouped; 0 leaves text columns out (default: {DEFAULT_MAX_LEVELS})",
            type=int,
            metavar="N",
        ),
        option(
            "--center",
            "with --csv: subtract each column's centre, its private median, the middle of a declared range or (the "
            "target) a private mean (evaluation only: the training means); the models have no intercept "
            "(default: --center)",
            action=argparse.BooleanOptionalAction,
        ),
        option(
            "--standardize",
            "with --csv: divide each numeric column by half its range (evaluation only: its training standard "
            "deviation) (default: --standardize)",
            action=argparse.BooleanOptionalAction,
        ),
        option("--feature-bound", "with --scaling clip or --parquet: public bound on ‖x‖₁", **PUBLIC_BOUND),
        option("--target-bound", "with --scaling clip or --parquet, ridge: public bound on |y|", **PUBLIC_BOUND),
        option(
            "--scheduler",
            "with --parquet: a running dask.distributed scheduler, tcp://host:port (needs the distributed "
            "package) (default: Dask's local threads)",
            metavar="ADDRESS",
        ),
        option(
            "--test-size",
            f"share of rows held out of the private algorithms (default: {DEFAULT_TEST_SIZE})",
            type=float,
            metavar="SHARE",
        ),
        option("--split-seed", f"seed of the train/test split (default: {DEFAULT_SPLIT_SEED})", type=int, metavar="N"),
    ),
)

ALGORITHM = Group(
    "algorithm (docs/mathematics.md; defaults: the paper's settings with the calibration that paid least)",
    (
        option(
            "--lam",
            f"regularisation λ > 0, or '{AUTO_LAM}': chosen privately, under the accuracy test, from a public grid (run, "
            f"with a target in R² or accuracy) (default: {AUTO_LAM} with such a target, else {DEFAULT_LAM})",
            type=lam_value,
            metavar="λ|auto",
        ),
        option(
            "--radius",
            "a public bound R ≤ M on ‖θ‖, from domain knowledge, never from this data; the feasible set, "
            "the sensitivities and θ* then use R (default: none, R = M)",
            type=float,
            metavar="R",
        ),
        option(
            "--radius-mode",
            "the radius the methods run on: 'none' (M, or --radius), 'free' (R₀, a bound on ‖θ*‖ that holds for "
            "every dataset and reads none, or --radius if smaller), 'private' (a tighter radius below R₀ bought with "
            "a small part of the budget when a prediction from public quantities says it pays; derived) "
            f"(default: {SearchOptions.radius_mode})",
            choices=RADIUS_MODES,
            default=SearchOptions.radius_mode,
        ),
        option(
            "--radius-epsilon",
            "with --radius-mode private: the radius's ε_R (default: chosen from public quantities)",
            type=float,
            metavar="ε",
        ),
        option(
            "--radius-beta",
            "with --radius-mode private: the probability β < γ that the radius falls below ‖θ*‖ "
            "(default: chosen from public quantities)",
            type=float,
            metavar="β",
        ),
        option(
            "--gamma",
            f"failure probability γ in (0, 1) (default: {DEFAULT_GAMMA})",
            type=float,
            default=DEFAULT_GAMMA,
            metavar="γ",
        ),
        option(
            "--T",
            "privacy levels on the ε grid, ≥ 2 (default: %(default)s)",
            type=int,
            default=SearchOptions.T,
            metavar="N",
        ),
        option("--eps-min", "smallest ε of the grid (default: 1/n)", type=float, metavar="ε"),
        option("--eps-max", "largest ε of the grid (default: 4E, E of the theory approach)", type=float, metavar="ε"),
        option(
            "--spacing",
            f"spacing of the ε grid (default: {SearchOptions.spacing})",
            choices=SPACINGS,
            default=SearchOptions.spacing,
        ),
        option(
            "--generator",
            "hypothesis generator (default: covariance for ridge, output for logistic)",
            choices=sorted(GENERATORS),
        ),
        option(
            "--calibration",
            "InteractiveAboveThreshold calibration: 'theorem' (Thm 3.2/3.4), 'paper-code' "
            "(the authors' code, behind the paper's plotted numbers) or an exact one that spends exactly γ: "
            "'exact', 'exact-opt', 'exact-paper', 'exact-paper-opt' (default: %(default)s, the cheapest measured)",
            choices=sorted(CALIBRATIONS),
            default=SearchOptions.calibration,
        ),
        option(
            "--noise",
            "noise of the hypotheses: 'laplace' (the paper's, pure ex-post privacy) or 'gaussian' "
            "(Brownian noise reduction, (ε, δ)-ex-post privacy; derived, consistent with Rogers et al. 2023; "
            f"nr and doubling only) (default: {SearchOptions.noise})",
            choices=sorted(NOISES),
            default=SearchOptions.noise,
        ),
        option(
            "--fallback",
            "what a run whose test never passes releases: 'nothing' (charged its declared top ε) or 'exact' "
            "(the paper's: the exact, non-private θ* at ε = ∞; synthetic data only) "
            f"(default: {SearchOptions.fallback})",
            choices=FALLBACKS,
            default=SearchOptions.fallback,
        ),
        option(
            "--delta",
            "δ of the (ε, δ) guarantees: of --noise gaussian (in (0, 1)) and of the Gibbs posterior (derived; "
            f"0 asks it for pure ε on ridge) (default: {DEFAULT_DELTA:g})",
            type=float,
            default=DEFAULT_DELTA,
            metavar="δ",
        ),
        option(
            "--test-budget",
            "with --kappa: the most the private test may be predicted to cost at the released α; below the bound "
            f"on R(0) this implies, the data show no signal a private model could keep (default: "
            f"{DEFAULT_TEST_BUDGET:g})",
            type=float,
            metavar="ε",
        ),
        option(
            "--seed",
            "seed of the runs, for a repeatable run (default: 0 on built-in synthetic data, a simulation; noise "
            f"from the operating system on real data, where a seed makes the output a '{REPEATABLE}')",
            type=int,
            metavar="N",
        ),
    ),
)
