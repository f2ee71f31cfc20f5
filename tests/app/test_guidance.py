"""The explorer's "what would lower it" box through AppTest: it appears on small data, and its fix works.

AppTests opened on diabetes (354 rows: ε in the hundreds) and one click (about 20 s
together on a quiet machine). On diabetes R(0) at λ = 0.005 is 0.013–0.037, as the server's secret noise of its private
preparation falls (12 noises): predicting zero meets α = 0.05, so there the box offers no larger α; at half this
process's R(0) (``below_zero``) it offers one below R(0).
"""

from __future__ import annotations

import math
import re

from tests.app.test_explorer import assert_clean, headline, open_app
from ui.dataset import builtin_problem
from ui.text import plain

QUERY = {"ds": "diabetes", "target": "alpha", "trials": "10", "T": "200", "methods": "nr,doubling", "seed": "0"}


def below_zero() -> str:
    """An α (as a link writes it) of about half this process's R(0) on diabetes: below what predicting zero meets."""
    return f"{math.floor(builtin_problem('diabetes', 0.005).zero_risk * 500) / 1000:g}"


def number(text: str) -> float:
    """A number as the page writes it (Markdown escapes, thousands separators) as a float."""
    return float(text.replace("\\", "").replace(",", ""))


def test_guidance_names_a_fix_whose_prediction_matches_the_rerun():
    """Clicking the α fix moves the slider; the rerun's median ε is within 20% of the prediction (below the
    prediction, or within 20% above it, when the page marks it as an upper estimate, '≤').

    Fixed seeds: deterministic. The package test ``test_predictions_match_reruns_within_20_percent``
    states the rate over seeds; here the testing part (exact) is over 90% of ε.
    """
    asked = below_zero()
    at = open_app(**QUERY, alpha=asked)
    assert_clean(at)
    texts = [m.value for m in at.markdown]
    assert any(t.startswith("**What would lower it**") for t in texts)
    # Why ε is high: the test (too few rows) or, with the row bound's cheaper test, the model itself, whichever part
    # is larger under this process's server noise; either sentence names the α asked.
    too_few, the_model = (
        plain(f"n = 354 rows is too few for α = {asked}"),
        plain("With n = 354 rows, the private model"),
    )
    below = plain(f"below α = {asked}")
    assert any(t.startswith(too_few) or (t.startswith(the_model) and below in t) for t in texts), texts
    fix = next(t for t in texts if t.startswith("**Accept excess risk α"))
    alpha = number(re.search(r"α \\= ([\d\\.]+)\*\*", fix).group(1))
    about, shown = re.search(r"predicted ε ([≈≤]) ([\d\\.,]+)", fix).groups()
    predicted = number(shown)
    zero_risk = builtin_problem("diabetes", 0.005).zero_risk  # this process's table (its server noise)
    assert float(asked) < alpha < zero_risk  # a looser α, but one that predicting zero does not meet
    at.button(key="guidance.fix.0").click().run()
    assert_clean(at)
    assert at.slider(key="explorer.alpha").value == alpha
    assert at.query_params["alpha"] == f"{alpha:g}"
    rerun = number(headline(at)["Noise reduction"])
    if about == "≤":  # below covariance perturbation's cliff a larger α may remove the cliff: an upper estimate
        assert rerun <= 1.2 * predicted, (predicted, rerun)
    else:
        assert abs(predicted / rerun - 1) <= 0.2, (predicted, rerun)


def test_where_predicting_zero_meets_alpha_the_box_offers_no_larger_alpha():
    """The notice says predicting zero meets α = 0.1 (diabetes's R(0) is about 0.064); the box agrees instead of
    offering a larger α (it once did)."""
    at = open_app(**{**QUERY, "alpha": "0.1"})
    assert_clean(at)
    assert any(w.value.startswith("Predicting nothing already meets this target") for w in at.warning)
    texts = [m.value for m in at.markdown]
    assert any(t.startswith("**What would lower it**") for t in texts)
    assert any(t.startswith("Predicting nothing already meets this α") for t in texts)
    assert not any(t.startswith("**Accept excess risk") for t in texts)
    assert any(t.startswith("**Regularise more") for t in texts)
