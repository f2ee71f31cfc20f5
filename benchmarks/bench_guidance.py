"""How well the guidance predicts: each fix's predicted median ε against a rerun with the fix.

For each case (dataset, generator, α) the default search runs ``--trials`` trials of noise
reduction; ``accfirst.guidance.advise`` proposes its fixes; each fix that changes a setting
is rerun with the same seed and trial count, and "more rows" is checked on the synthetic
sets by running on 4× the rows of the same population. Extra rows: α×2 and λ×10. Prints
one table row per (case, fix): predicted, rerun, relative error. Not a test: it prints figures.

Usage: ``python benchmarks/bench_guidance.py [--trials 40]`` (about 10 minutes on one core).
"""

from __future__ import annotations

import argparse

from accfirst import SearchOptions, run_trials
from accfirst.datasets import load_builtin
from accfirst.erm.problems import PROBLEMS
from accfirst.guidance import ROWS_FACTOR, advise
from accfirst.interpret import summarise_runs
from accfirst.methods.nr import NoiseReduction
from accfirst.prediction import predict_epsilon

GAMMA = 0.1
LAMBDA_CHOICES = (1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1, 0.2, 0.5, 1.0)
# (dataset, rows, generator, α): the small built-in sets and small samples of the synthetic ones.
CASES = (
    ("diabetes", None, None, 0.05),
    ("diabetes", None, None, 0.2),
    ("diabetes", None, "output", 0.05),
    ("breast-cancer", None, None, 0.05),
    ("breast-cancer", None, None, 0.1),
    ("synthetic-buzz", 2000, None, 0.05),
    ("synthetic-intrusion", 1000, None, 0.05),
)


def median_nr(problem, alpha: float, options: SearchOptions, trials: int):
    runs = run_trials(problem, [alpha], GAMMA, [NoiseReduction.key], trials, 0, **options.to_dict())
    return summarise_runs(runs).iloc[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    trials = parser.parse_args().trials
    print(f"{'case':34} {'fix':30} {'predicted':>10} {'rerun':>10} {'error':>7}")
    errors = []
    for name, rows, generator, alpha in CASES:
        data = load_builtin(name, noise_seed=0)  # a real table: repeatable, so the figures are comparable
        X, y = data.X_train[:rows], data.y_train[:rows]
        problem = PROBLEMS[data.task](X, y, 0.005)
        options = SearchOptions(generator=generator)
        base = median_nr(problem, alpha, options, trials)
        summary = base.to_frame().T
        advice = advise(problem, alpha, GAMMA, options, summary, lam_choices=LAMBDA_CHOICES)
        case = f"{name}{'' if rows is None else f'[{rows}]'} {generator or 'paper'} α={alpha:g}"
        print(f"{case:34} {'(measured) ε = ' + format(base['median_eps'], '.3g'):30}")
        if advice is None:
            continue
        checks = [(fix.title, fix.changes, fix.predicted_eps) for fix in advice.fixes if fix.changes]
        checks.append(("α×2", {"alpha": 2 * alpha}, predict_epsilon(problem, base, GAMMA, options, alpha=2 * alpha)))
        checks.append(("λ×10", {"lam": 0.05}, predict_epsilon(problem, base, GAMMA, options, lam=0.05)))
        if rows is not None:
            more = ROWS_FACTOR * rows
            predicted = predict_epsilon(problem, base, GAMMA, options, rows_factor=ROWS_FACTOR)
            checks.append((f"rows ×{ROWS_FACTOR}", {"rows": more}, predicted))
        for title, changes, predicted in checks:
            lam, radius = changes.get("lam", 0.005), changes.get("radius")
            n = changes.get("rows", rows)
            changed = PROBLEMS[data.task](data.X_train[:n], data.y_train[:n], lam, radius=radius)
            rerun = median_nr(changed, changes.get("alpha", alpha), options, trials)["median_eps"]
            error = predicted / rerun - 1
            errors.append(abs(error))
            print(f"{'':34} {title:30} {predicted:10.3g} {rerun:10.3g} {error:+7.1%}")
    errors.sort()
    print(
        f"\n{len(errors)} fixes: median |error| {errors[len(errors) // 2]:.1%}, largest {errors[-1]:.1%}, "
        f"share within 20%: {sum(e <= 0.2 for e in errors) / len(errors):.0%}"
    )


if __name__ == "__main__":
    main()
