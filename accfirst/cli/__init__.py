"""Command line: ``python -m accfirst sweep|run|counts`` — the app's numbers without the app
(docs/mathematics.md#what-a-run-reports).

One module per subcommand (``sweep``, ``run``, ``counts``), each with its option table and its command; the
tables ``run`` and ``sweep`` share (the data, the algorithm) are in ``options``, the problem they run on in
``data``, and what every command prints besides its results (one-line errors, progress, the seed) in ``output``.

User errors (bad options, unusable data, out-of-range parameters) print one line
``accfirst: error: …`` on stderr and exit with status 2, never a traceback. ``run`` exits with status 3 when its target
was refused before the data were prepared (nothing spent, the reason printed), 0 when it ran, whether or not it
released a model (its output says which); an interrupted command exits with 130.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from accfirst.cli import counts, run, sweep
from accfirst.cli.output import EXIT_INTERRUPTED, PROG, Parser, fail
from accfirst.cli.sweep import command_line
from accfirst.errors import AccFirstError

SUBCOMMANDS = {subcommand.name: subcommand for subcommand in (sweep.SUBCOMMAND, run.SUBCOMMAND, counts.SUBCOMMAND)}


def build_parser() -> argparse.ArgumentParser:
    """The ``accfirst`` parser with its ``sweep``, ``run`` and ``counts`` subcommands."""
    parser = Parser(
        prog=PROG,
        description="Accuracy-first differential privacy (Ligett et al., NeurIPS 2017) from the command line.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="{" + ",".join(SUBCOMMANDS) + "}")
    for subcommand in SUBCOMMANDS.values():
        subcommand.add_to(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m accfirst``; returns the exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(words)
    try:
        return SUBCOMMANDS[args.command].command(args, words)
    except AccFirstError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


__all__ = ["build_parser", "command_line", "main"]
