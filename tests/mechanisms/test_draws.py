"""Every release draws its random numbers through ``accfirst.mechanisms.draws``, from its generator's state.

docs/mathematics.md#one-place-draws-every-release. A scan of the package's source: a call of any sampling method of
``numpy.random.Generator`` (``laplace``, ``normal``, ``exponential``, ``integers``, ``random``, …) outside
``draws.py`` fails, unless it is one of the named exceptions below, none of which draws the noise of a release from
user data; so does a generator made from a seed outside the named entry points that turn a user's seed (or none)
into one, and any use of a generator's bit generator or seed sequence (the private radius once derived its noise again from it, and
two radii then shared one noise: tests/attacks/test_radius_reuse.py). A new release path that draws its own noise,
raw float64 noise included, fails here. Deterministic: it reads source files.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import numpy as np

PACKAGE = Path(__file__).resolve().parents[2] / "accfirst"
SAMPLING = {name for name in dir(np.random.Generator) if not name.startswith("_")} - {"bit_generator", "spawn"}
SAMPLING |= {"random_raw"}  # a bit generator's raw words
SEEDING = {"default_rng", "SeedSequence", "PCG64", "Generator", "RandomState", "seed"}

# (module, function) → why it may read a generator. A function of None stands for the whole module.
DRAWS = {("mechanisms/draws.py", None): "the one place that draws a release's random numbers"}
SIMULATIONS = {
    ("datasets/synthetic.py", None): "data generated from public parameters",
    ("teaching/randomized_response.py", "respond"): "a classroom's simulated answers",
    ("teaching/randomized_response.py", "simulate_polls"): "a classroom's simulated polls",
    ("accounting/counts.py", "log_uniform_counts"): "synthetic counts",
}
SPLITS = {
    ("datasets/prepare/private.py", "random_split"): "which rows test the model: n and a seed, no data",
    ("datasets/prepare/usable.py", "stratified_split"): "the evaluation-only preparation's split",
}
# Where a seed the user gave (or none: the operating system) becomes a generator.
ENTRY_POINTS = {
    ("validation.py", "as_generator"): "a generator, a seed or None (the operating system)",
    ("search/experiments.py", "trial_rng"): "a cell's generator from the batch's seed and the cell's key",
    ("accounting/session.py", "run_session"): "an analysis's generator from the session's entropy",
    ("accounting/counts.py", "compare_counts"): "an arm's generator from the comparison's entropy",
    ("datasets/prepare/noise.py", "preparation_rng"): "the preparation's generator",
    ("estimators/base.py", "_rng"): "an estimator's generator",
    ("datasets/builtin.py", "_buzz_table"): "a synthetic table's public seed",
    ("datasets/builtin.py", "_intrusion_table"): "a synthetic table's public seed",
    ("datasets/prepare/private.py", "random_split"): "the split's seed",
    ("datasets/prepare/usable.py", "stratified_split"): "the split's seed",
    ("mechanisms/draws.py", None): "a chain's own stream, seeded from its generator",
}


def _places(tree: ast.Module) -> Iterator[tuple[ast.AST, str | None]]:
    """Every node of a module with the name of the outermost function that holds it (None at module level)."""
    for node in tree.body:
        name = node.name if isinstance(node, ast.FunctionDef) else None
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                method = item.name if isinstance(item, ast.FunctionDef) else None
                yield from ((child, method) for child in ast.walk(item))
        else:
            yield from ((child, name) for child in ast.walk(node))


def _imported(tree: ast.Module) -> set[str]:
    """The names a module binds by importing (modules such as ``np``, ``secrets``, ``math``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


def _allowed(module: str, function: str | None, allowed: dict[tuple[str, str | None], str]) -> bool:
    return (module, None) in allowed or (module, function) in allowed


def _reads(package: Path = PACKAGE) -> Iterator[tuple[str, str, int, str]]:
    """(kind, module, line, code) of every read of a generator and every generator made from a seed."""
    for path in sorted(package.rglob("*.py")):
        module = path.relative_to(package).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules = _imported(tree)
        for node, function in _places(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("seed_seq", "bit_generator"):
                if not _allowed(module, function, DRAWS):
                    yield "seed sequence", module, node.lineno, ast.unparse(node)
            if not isinstance(node, ast.Call):
                continue
            called = node.func
            name = (
                called.attr if isinstance(called, ast.Attribute) else called.id if isinstance(called, ast.Name) else ""
            )
            receiver = called.value if isinstance(called, ast.Attribute) else None
            from_module = isinstance(receiver, ast.Name) and receiver.id in modules
            if name in SAMPLING and receiver is not None and not from_module:
                if not _allowed(module, function, DRAWS | SIMULATIONS | SPLITS):
                    yield "draw", module, node.lineno, ast.unparse(node)
            if name in SEEDING and not _allowed(module, function, ENTRY_POINTS):
                yield "generator from a seed", module, node.lineno, ast.unparse(node)


def test_no_release_draws_its_noise_outside_the_draws_module() -> None:
    found = [f"{module}:{line} ({kind}): {code}" for kind, module, line, code in _reads()]
    assert not found, "read a generator only through accfirst.mechanisms.draws:\n" + "\n".join(found)


def test_the_scan_sees_a_raw_draw_and_a_seed_derived_generator(tmp_path) -> None:
    """The scan has power: a module that adds raw Laplace noise, or rebuilds a generator from a seed, is caught."""
    leaky = tmp_path / "leaky.py"
    leaky.write_text(
        "import numpy as np\n\n"
        "def release(value, rng):\n"
        "    return value + rng.laplace(0.0, 1.0)\n\n"
        "def again(rng):\n"
        "    return np.random.default_rng(rng.bit_generator.seed_seq.entropy)\n",
        encoding="utf-8",
    )
    kinds = sorted(kind for kind, *_ in _reads(tmp_path))
    assert kinds == ["draw", "generator from a seed", "seed sequence", "seed sequence"]
