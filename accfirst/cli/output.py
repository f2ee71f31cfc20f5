"""What the command line prints besides results: its one-line errors, the sweep's progress, the seed's name
(docs/mathematics.md#what-a-run-reports).

User errors (bad options, unusable data, out-of-range parameters) print one line ``accfirst: error: …`` on stderr
and exit with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TextIO

from accfirst.validation import REPEATABLE, release_seed, validate_count

PROG = "accfirst"
EXIT_USAGE = 2
# ``run``: the target was refused before the rows were prepared, from public numbers alone; nothing was spent
# (docs/mathematics.md#refusals-that-spend-nothing).
EXIT_REFUSED = 3
EXIT_INTERRUPTED = 130


def fail(message: str) -> NoReturn:
    """Print ``accfirst: error: message`` (on one line) on stderr and exit with status 2."""
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)
    raise SystemExit(EXIT_USAGE)


class Parser(argparse.ArgumentParser):
    """argparse, but every error is one line ``accfirst: error: …`` and exit status 2."""

    def error(self, message: str) -> NoReturn:
        fail(message)


class ProgressLine:
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


def interrupt_flag() -> tuple[Callable[[], bool], Callable[[], object]]:
    """A flag that Ctrl-C sets (so a sweep stops cleanly) and a function that restores the handler."""
    hits: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: hits.append(signum))
    return (lambda: bool(hits)), (lambda: signal.signal(signal.SIGINT, previous))


def make_out_folder(out: Path) -> None:
    """Create ``--out`` and check it is writable, before any work starts."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".accfirst-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        fail(f"cannot write to --out {out}: {exc.strerror or exc}")


def command_seed(args: argparse.Namespace, simulation: bool) -> tuple[int, str]:
    """The seed of a command's randomness and how its output names it (no public seed on a release).

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
