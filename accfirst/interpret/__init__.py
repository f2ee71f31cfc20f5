"""Numbers into words for people: one module per kind of sentence (docs/mathematics.md#setting-and-notation,
docs/mathematics.md#what-a-run-reports).

``epsilon``: ε, e^ε, δ and the posterior bound an ε allows, and typical values that keep fallbacks (ε = ∞) in;
``bill``: where a run's ε went and what its preparation adds; ``summary``: each method's runs summarised and a
sentence about them; ``ranking``: the methods ranked by what they paid; ``alpha``: what an excess risk α allows on
the data; ``certified``: runs toward a target in R² or accuracy summarised, and why one released nothing. Everything
here is pure (numbers and strings); the app and the CLI both use it.
"""

from accfirst.interpret.alpha import AlphaMeaning, alpha_meaning, describe_alpha
from accfirst.interpret.bill import (
    bill_text,
    preparation_label,
    preparation_note,
    preparation_steps,
    step_cost,
    summary_parts,
)
from accfirst.interpret.epsilon import (
    SUPERSCRIPTS,
    delta_sentence,
    exp_epsilon,
    format_delta,
    format_epsilon,
    format_exp_epsilon,
    format_posterior,
    format_probability,
    guarantee_text,
    median_with_inf,
    own_delta,
    posterior_bound,
    quantile_with_inf,
)
from accfirst.interpret.ranking import ranking_sentence
from accfirst.interpret.summary import SUMMARY_COLUMNS, plain_sentence, radius_sentence, summarise_runs

__all__ = [
    "SUMMARY_COLUMNS",
    "SUPERSCRIPTS",
    "AlphaMeaning",
    "alpha_meaning",
    "bill_text",
    "delta_sentence",
    "describe_alpha",
    "exp_epsilon",
    "format_delta",
    "format_epsilon",
    "format_exp_epsilon",
    "format_posterior",
    "format_probability",
    "guarantee_text",
    "median_with_inf",
    "own_delta",
    "plain_sentence",
    "posterior_bound",
    "preparation_label",
    "preparation_note",
    "preparation_steps",
    "quantile_with_inf",
    "radius_sentence",
    "ranking_sentence",
    "step_cost",
    "summarise_runs",
    "summary_parts",
]
