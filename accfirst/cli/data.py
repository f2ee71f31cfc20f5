"""The problem a command runs on: a built-in dataset, a table in memory, or Parquet files larger than memory
(docs/mathematics.md#setting-and-notation, docs/data-preparation.md#scaling-into-the-unit-ball).

``--dataset`` and ``--csv`` are prepared in memory (docs/mathematics.md#preparing-the-data-privately); ``--parquet``
is read block by block with Dask by ``accfirst.scale``, imported only then.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from accfirst.cli.options import DEFAULT_SPLIT_SEED, DEFAULT_TEST_SIZE, given
from accfirst.cli.output import fail
from accfirst.datasets import BUILTIN_DATASETS, PreparedData, Schema, from_frame, load_builtin, load_schema, read_upload
from accfirst.datasets.columns import guess_task
from accfirst.datasets.prepare.private import held_out_rows
from accfirst.datasets.prepared import PRIVATE_MODE
from accfirst.datasets.preprocess import OUT_OF_CORE_SCALING
from accfirst.erm.problem import Problem
from accfirst.erm.problems import prepared_problem
from accfirst.snippet import PREPARATION_OPTIONS

# ``from_frame``'s options that ``--csv`` passes on by name when given, besides ``PREPARATION_OPTIONS``.
FRAME_OPTIONS = (
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


@dataclass(frozen=True)
class TableToPrepare:
    """What a command knows of ``--dataset`` or ``--csv`` before it prepares the rows, all public: the task, how many
    rows will train the model and the targets' range (docs/mathematics.md#refusals-that-spend-nothing).

    ``n_train`` is ``None`` where only the preparation can say and where preparing spends nothing (data generated from
    public parameters, an evaluation-only preparation); ``prepare()`` prepares the rows.
    """

    task: str
    n_train: int | None
    target_range: tuple[float, float]
    prepare: Callable[[], PreparedData]


def command_problem(args: argparse.Namespace, lam: float) -> tuple[Problem, str, list[str]]:
    """The ERM problem at λ = ``lam`` of ``--dataset``, ``--csv`` or ``--parquet``, its task and preparation steps
    (docs/mathematics.md#setting-and-notation, docs/mathematics.md#the-two-learning-problems,
    docs/data-preparation.md#scaling-into-the-unit-ball, docs/mathematics.md#preparing-the-data-privately); the last
    step is the preparation's cost."""
    if args.parquet is not None:
        return parquet_problem(args, lam)
    data = table_to_prepare(args).prepare()
    return prepared_problem(data, lam, args.radius), data.task, list(data.report.steps)


def read_table(path: Path, column: str, flag: str) -> pd.DataFrame:
    """The table at ``path`` (CSV or Parquet), which must have ``column`` (given by option ``flag``)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror or exc}")
    table = read_upload(raw, path.name)
    if column not in table.columns:
        fail(f"{flag} {column!r} is not a column of {path.name}; columns: {', '.join(map(str, table.columns))}")
    return table


def schema(path: Path | None) -> Schema | None:
    """The declared metadata of ``--schema`` (``None`` without it)."""
    return None if path is None else load_schema(path)


def table_to_prepare(args: argparse.Namespace) -> TableToPrepare:
    """The rows of ``--dataset`` or ``--csv``, not yet prepared, with what is known of them before
    (docs/mathematics.md#setting-and-notation, docs/data-preparation.md#scaling-into-the-unit-ball)."""
    if args.scheduler is not None:
        fail("--scheduler only applies with --parquet")
    test_size = DEFAULT_TEST_SIZE if args.test_size is None else args.test_size
    seed = DEFAULT_SPLIT_SEED if args.split_seed is None else args.split_seed
    if args.dataset is not None:
        csv_only = [flag for flag, value in _csv_options(args).items() if value]
        if csv_only:
            verb = "applies" if len(csv_only) == 1 else "apply"
            fail(f"{', '.join(csv_only)} only {verb} with --csv; built-in datasets come prepared")
        info = BUILTIN_DATASETS[args.dataset]
        if args.noise_seed is not None and info.public:
            fail(f"--noise-seed does not apply to {args.dataset}: it is generated from public parameters, no noise")
        return TableToPrepare(
            info.task,
            None if info.public else _training_rows(info.n, test_size),
            info.target_range,
            lambda: load_builtin(args.dataset, test_size=test_size, seed=seed, noise_seed=args.noise_seed),
        )
    if args.target is None:
        fail("--csv needs --target COL, the column to predict")
    table = read_table(args.csv, args.target, "--target")
    private = (args.preparation or PRIVATE_MODE) == PRIVATE_MODE
    # A private preparation reads nothing to choose the task: a declared positive class means a class target.
    declared_schema = schema(args.schema)
    declared = args.positive_class is not None or (
        declared_schema is not None and declared_schema.positive_class is not None
    )
    task = args.task or (
        ("logistic" if declared else "ridge") if private else guess_task(table[args.target], read_values=True)
    )
    return TableToPrepare(
        task,
        _training_rows(len(table), test_size) if private else None,
        Problem.target_range,
        lambda: from_frame(
            table,
            target=args.target,
            task=task,
            schema=declared_schema,
            log1p_columns=args.log1p,
            ranges=declared_ranges(args.ranges),
            test_size=test_size,
            seed=seed,
            **given(args, (*FRAME_OPTIONS, *PREPARATION_OPTIONS)),
        ),
    )


def _training_rows(n: int, test_size: float) -> int | None:
    """The rows a private split of n rows trains on (public), or ``None`` for a split the preparation will refuse."""
    valid = isinstance(test_size, float) and 0 < test_size < 1 and n >= 2
    return n - held_out_rows(n, test_size) if valid else None


def declared_ranges(pairs: list[tuple[str, tuple[float, float]]] | None) -> dict[str, tuple[float, float]] | None:
    """The ``--range`` options as ``from_frame``'s ``ranges`` (``None`` without any); a column given twice fails."""
    if not pairs:
        return None
    ranges = dict(pairs)
    if len(ranges) < len(pairs):
        twice = sorted({name for name, _ in pairs if sum(other == name for other, _ in pairs) > 1})
        fail(f"--range gives {', '.join(twice)} more than one range; give each column one")
    return ranges


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
        "--budget": args.budget is not None,
        "--range": bool(args.ranges),
    }


def parquet_problem(args: argparse.Namespace, lam: float) -> tuple[Problem, str, list[str]]:
    """The problem at λ = ``lam`` of ``--parquet`` files, built block by block with Dask (``accfirst.scale``)."""
    if args.scaling == "paper":
        fail(f"--scaling paper does not apply with --parquet: {OUT_OF_CORE_SCALING}")
    preparation = {
        **_preparation_flags(args),
        "--noise-seed": args.noise_seed is not None,
        "--test-size": args.test_size is not None,
        "--split-seed": args.split_seed is not None,
    }
    refused = [flag for flag, value in preparation.items() if value]
    if refused:
        fail(
            f"{', '.join(refused)} {'does' if len(refused) == 1 else 'do'} not apply with --parquet: out of core "
            "nothing reads the data to prepare it (write the files prepared), and every row trains the model"
        )
    if args.target is None:
        fail("--parquet needs --target COL, the column to predict")
    from accfirst.scale import problem_from_parquet  # Dask, only for the command that needs it

    task = args.task or "ridge"
    problem = problem_from_parquet(
        args.parquet,
        args.target,
        args.features,
        task=task,
        lam=lam,
        **given(args, ("feature_bound", "target_bound", "radius", "scheduler", "positive_class")),
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
