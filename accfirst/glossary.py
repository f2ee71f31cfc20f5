"""The words the app uses, in plain language: one entry per term, for the glossary page and the docs.

Each entry says what the term means for someone who has never read a privacy paper, and
where it matters, without formulas beyond what the app itself shows. The numbers in the
examples are computed (``interpret``), not typed in, so they stay right.
"""

from __future__ import annotations

from dataclasses import dataclass

from accfirst.interpret import format_exp_epsilon, format_posterior


@dataclass(frozen=True)
class Term:
    """One glossary entry: the term as the app writes it, its symbol, and a plain explanation."""

    term: str
    symbol: str
    plain: str


def _risk_factor_example(eps: float) -> str:
    return (
        f"At ε = {eps:g} the factor is e^ε = {format_exp_epsilon(eps)}: someone 1% sure of a fact about one "
        f"person can afterwards be at most {format_posterior(eps, 0.01)} sure."
    )


GLOSSARY: tuple[Term, ...] = (
    Term(
        "Privacy loss",
        "ε",
        "How much the released model can depend on any one person's record. With ε, swapping one person's "
        "record for another changes the chance of any result by at most a factor e^ε. Smaller is more "
        "private; ε = 0 would mean the data are not used at all; ε = ∞ means no protection.",
    ),
    Term(
        "Risk factor",
        "e^ε",
        "The same privacy loss as a multiplier on an adversary's odds: however much they knew before, "
        "their odds that a given fact about one person is true grow by at most this factor. "
        + _risk_factor_example(1.0)
        + " "
        + _risk_factor_example(5.0),
    ),
    Term(
        "Ex-post privacy loss",
        "ex-post ε",
        "The privacy loss actually paid, known only after the run because it depends on where the search "
        "stopped. Accuracy-first methods try the most private models first and stop at the first one that is "
        "accurate enough, so the loss is as small as the data allow — and it is guaranteed for the outcome "
        "you got, not just on average.",
    ),
    Term(
        "δ (delta)",
        "δ",
        "Some guarantees hold except with a tiny probability δ (for example one in a million). Methods with "
        "Gaussian noise and the Gibbs posterior give such (ε, δ) guarantees; the app always shows their δ "
        "beside the ε, and does not rank them against pure-ε methods without saying so.",
    ),
    Term(
        "Excess risk",
        "R(θ)",
        "How much worse a model fits the training data than the best possible model of the same kind, "
        "measured on the objective being minimised (half the mean squared error plus the regularisation for "
        "ridge; the average log-loss plus the regularisation for logistic regression). 0 means as good as "
        "the exact model. It is computed from the data for evaluation only.",
    ),
    Term(
        "Accuracy target",
        "α",
        "The largest excess risk you accept. You choose it; the methods then look for the most private model "
        "whose excess risk is at most α. A smaller α asks for a more accurate model and costs more privacy.",
    ),
    Term(
        "Failure probability",
        "γ",
        "The chance you accept that a method returns a model worse than α. Noise reduction and doubling "
        "meet α with probability at least 1 − γ; the theory approach promises α only on average.",
    ),
    Term(
        "Regularisation",
        "λ",
        "How strongly the model is pulled towards small weights. A larger λ bounds the weights more tightly, "
        "so less noise is needed to hide one person, but the model is more biased.",
    ),
    Term(
        "Norm bound",
        "M, R",
        "How large the model's weights can be: M follows from λ; a smaller public radius R may be stated from "
        "domain knowledge (never from the data). Every sensitivity grows with the bound, so a smaller honest "
        "bound means less noise.",
    ),
    Term(
        "Privacy levels",
        "T",
        "How many privacy levels the noise-reduction search tries, from very private to barely private. "
        "More levels find a stop closer to the best one but make the private test slightly more expensive.",
    ),
    Term(
        "Calibration",
        "ε_A",
        "How the noise of the private accuracy test is set. The test costs ε_A whatever happens; a tighter "
        "calibration pays less while still keeping the failure probability at most γ. The app lists each "
        "preset with its ε_A for the current settings.",
    ),
    Term(
        "Testing vs generating",
        "ε_A + ε_t",
        "Where the privacy goes: part pays for the private test that decides when a model is accurate "
        "enough (testing), part for the released model itself (generating).",
    ),
    Term(
        "Fallback",
        "nothing released",
        "No private model passed the test, so the run released nothing and is charged the most it could have "
        "cost (its top level). The paper instead released the exact, non-private model (ε = ∞); that stays an "
        "option for reproducing its figures on synthetic data. The app always counts fallbacks; it never hides them.",
    ),
    Term(
        "Noise reduction",
        "NR",
        "The paper's method: one chain of ever less noisy versions of the model, released most private "
        "first, so stopping early costs only the privacy of the model you stopped at.",
    ),
    Term(
        "Doubling",
        "",
        "The baseline: try independent private models at ε, 2ε, 4ε, … and pay for every one tried.",
    ),
    Term(
        "Theory approach",
        "E",
        "Pick one ε in advance from a worst-case formula so that the excess risk is α on average, and run "
        "once. It needs no test but often pays far more, and promises α only on average.",
    ),
    Term(
        "Privacy budget and filter",
        "",
        "When many analyses use the same data, a filter adds up what each one actually paid and refuses the "
        "next one when it could push the total over the budget.",
    ),
)
