"""``accfirst counts``: counts released to a relative error under one (ε, δ) budget, noise reduction against doubling
(docs/mathematics.md#counts-to-a-relative-error), written as ``results.csv`` and ``report.html``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from accfirst.accounting.counts import (
    COUNT_METHODS,
    category_counts,
    compare_counts,
    histogram_counts,
    log_uniform_counts,
    summarise_counts,
)
from accfirst.cli.data import read_table, schema
from accfirst.cli.options import OUT, Group, OneOf, Subcommand, names, option, value_range
from accfirst.cli.output import PROG, command_seed, fail, make_out_folder
from accfirst.datasets import Schema
from accfirst.mechanisms.brownian import DEFAULT_DELTA
from accfirst.plots.counts import count_figures
from accfirst.plots.report import html_page
from accfirst.validation import REPEATABLE, validate_count

COUNTS = Group(
    "counts (one of --synthetic or --csv)",
    (
        OneOf(
            (
                option("--synthetic", "N counts, log-uniform on [--low, --high]", type=int, metavar="N"),
                option("--csv", "a table (CSV or Parquet) to count rows of", type=Path, metavar="PATH"),
            ),
            required=True,
        ),
        option("--low", "with --synthetic: smallest count (default: 100)", type=float, default=1e2),
        option("--high", "with --synthetic: largest count (default: 100000)", type=float, default=1e5),
        option("--column", "with --csv: the column whose rows are counted (required)", metavar="COL"),
        option(
            "--categories",
            "with --csv: the categories to count, in this order (default: the column's distinct values, "
            "sorted; that list reads the data and is not private)",
            type=names,
            metavar="A,B,...",
        ),
        option("--bins", "with --csv: count a numeric column in N equal bins", type=int, metavar="N"),
        option(
            "--range",
            "with --bins: public bounds of the bins (default: the column's min and max, which is not private)",
            type=value_range,
            metavar="LOW:HIGH",
        ),
        option(
            "--schema",
            "with --csv: declared metadata (JSON or YAML): the column's declared levels are the categories and "
            "its declared range the bins' bounds, unless --categories or --range say otherwise",
            type=Path,
            metavar="PATH",
        ),
    ),
)

RELEASE = Group(
    "release (derived, consistent with Rogers et al. 2023)",
    (
        option("--rel-error", "target relative error α > 0", type=float, required=True, metavar="α"),
        option("--epsilon", "the budget's ε (default: 1)", type=float, default=1.0, metavar="ε"),
        option(
            "--delta", f"the budget's δ (default: {DEFAULT_DELTA:g})", type=float, default=DEFAULT_DELTA, metavar="δ"
        ),
        option(
            "--methods",
            f"methods among {','.join(COUNT_METHODS)} (default: both)",
            type=names,
            default=list(COUNT_METHODS),
            metavar="M,M",
        ),
        option("--beta", "per-count failure probability β (default: 0.05)", type=float, default=0.05, metavar="β"),
        option(
            "--cap",
            "share κ of the budget one count may use, in (0, 1]: a small κ stops one small count from "
            "eating the budget, a large κ certifies smaller counts (default: 0.05)",
            type=float,
            default=0.05,
            metavar="κ",
        ),
        option(
            "--seed",
            "seed of the release, for a repeatable run (default: 0 for --synthetic counts, a simulation; noise from "
            f"the operating system for counts of --csv, where a seed makes the output a '{REPEATABLE}')",
            type=int,
            metavar="N",
        ),
        OUT,
    ),
)


def command(args: argparse.Namespace, argv: list[str]) -> int:
    """Release the counts by every method, print the summary, write ``results.csv`` and ``report.html``."""
    counts, source = _counts_to_release(args)
    seed, seed_text = command_seed(args, args.csv is None)
    make_out_folder(args.out)
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


def _counts_to_release(args: argparse.Namespace) -> tuple[pd.Series, str]:
    """The counts of ``--synthetic`` or ``--csv`` and a line saying where they came from."""
    if args.csv is None:
        given = (("--column", args.column), ("--categories", args.categories), ("--bins", args.bins))
        for flag, value in (*given, ("--schema", args.schema)):
            if value is not None:
                fail(f"{flag} only applies with --csv")
        validate_count("--synthetic", args.synthetic, 1)
        values = log_uniform_counts(args.synthetic, args.low, args.high, rng=0 if args.seed is None else args.seed)
        return pd.Series(values), f"{args.synthetic} synthetic counts, log-uniform on [{args.low:g}, {args.high:g}]"
    if args.column is None:
        fail("--csv needs --column COL, the column whose rows are counted")
    if args.bins is not None and args.categories is not None:
        fail("--bins and --categories do not go together: bin a numeric column or count categories")
    if args.range is not None and args.bins is None:
        fail("--range only applies with --bins")
    column = read_table(args.csv, args.column, "--column")[args.column]
    declared = (schema(args.schema) or Schema()).column(args.column)
    if args.bins is not None:
        bounds = args.range or declared.range
        private = "" if bounds else " (range read from the data: not private)"
        return histogram_counts(column, args.bins, bounds), f"{args.column} in {args.bins} bins{private}"
    categories = args.categories or (None if declared.levels is None else list(declared.levels))
    private = "" if categories else " (category list read from the data: not private)"
    return category_counts(column, categories), f"rows per category of {args.column}{private}"


SUBCOMMAND = Subcommand(
    "counts",
    help="release counts to a relative error under one (ε, δ) budget; write results.csv and report.html",
    description="Release as many counts as the budget allows, each within relative error α w.p. ≥ 1 − β, "
    "by Brownian noise reduction and by doubling (derived, consistent with Rogers et al. 2023).",
    options=lambda: (COUNTS, RELEASE),
    command=command,
)
