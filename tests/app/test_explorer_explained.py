"""Numbers on the explorer that looked wrong without a word of why, through AppTest: each is explained, or not drawn.

Small data (diabetes, small uploads) and few trials keep these fast. The sentences' helpers are checked on their own
numbers in ``test_ui_helpers.py``; here, that the page shows them where the numbers are.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from tests.app.page_text import shown
from tests.app.test_explorer import SMALL, assert_clean, figures, open_app
from tests.app.test_guidance import below_zero
from tests.app.test_upload import uploaded
from ui.settings import CALIBRATION_LABELS


def captions(at) -> list[str]:
    return [shown(c.value) for c in at.caption]


def test_the_sidebars_price_of_the_check_is_the_cards_check():
    """With the free bound the sidebar's ε_A (the chosen calibration's caption) is what each run's check cost; it was
    priced on M beside cards that used R₀ (1.04 against 0.246 on the default view)."""
    at = open_app(**SMALL, alpha="0.1", methods="nr", rmode="free")
    assert_clean(at)
    radio = at.radio(key="explorer.cal")
    price = radio.proto.captions[list(CALIBRATION_LABELS).index(radio.value)]  # "ε_A = 12.3" under the chosen one
    [card] = [m.value for m in at.markdown if m.value.startswith("Where it went (medians)")]
    check = re.search(r"the check \*\*([^*]+)\*\*", card).group(1)
    assert price == f"ε_A = {check}"
    assert any("on the bound R₀ = " in c and "the cards' “check”" in c for c in captions(at.sidebar))


def test_a_model_that_meets_alpha_is_set_against_predicting_zero():
    """Meeting α bounds the training excess risk, not R²: the caption under the held-out quality says how much of
    R(0) α is (a doubling model with R² 0.0005 'met α' without a word)."""
    asked = below_zero()
    at = open_app(**SMALL, alpha=asked)
    assert_clean(at)
    [quality] = [c for c in captions(at) if c.startswith("Held-out test rows")]
    assert re.search(rf"α = {re.escape(asked)} is \d+% of R\(0\) = [\d.]+, the excess risk of predicting zero", quality)
    assert quality.endswith("θ* is the exact, non-private minimiser.")


def test_when_no_trial_halts_the_split_of_epsilon_is_not_drawn():
    """ε_max far below what any model needs at α below R(0): no run's test passes and, on a real table, none releases
    anything; the page says so instead of drawing 'median ε over trials that halted' over no trial, and draws no held-out
    quality for a model that was not released (the page failed on its θ)."""
    at = open_app(**SMALL, alpha="0.005", methods="doubling", eps_min="0.00001", eps_max="0.0001")
    assert_clean(at)
    titles = [spec["layout"]["title"]["text"] for spec in figures(at).values()]
    assert not any(title.startswith("Privacy spent") for title in titles)
    assert any(
        "No trial halted" in i.value and "4 passed no level of the test and released nothing" in i.value
        for i in at.info
    )
    [quality] = [c for c in captions(at) if "θ* is the exact, non-private minimiser" in c]
    assert "Not drawn: Doubling released no model in trial 0 (no level passed its test)." in quality
    assert "test_quality" not in {chart.proto.id.rsplit("-", 1)[-1] for chart in at.get("plotly_chart")}


def test_runs_that_released_nothing_get_no_quality_figures():
    """At a share of the gain a small upload shows no signal: nothing was released, so no held-out quality is drawn
    for it (the chart showed θ = 0 as if it were a model)."""
    at = uploaded(_small_signal_csv(), target="kappa")
    assert_clean(at)
    assert "test_quality" not in {chart.proto.id.rsplit("-", 1)[-1] for chart in at.get("plotly_chart")}
    titles = [spec["layout"]["title"]["text"] for spec in figures(at).values()]
    assert "Quality on the held-out test set" not in titles
    assert any("released no model in trial 0 (no signal)" in c for c in captions(at))


def _small_signal_csv(rows: int = 300) -> bytes:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(rng.exponential(size=(rows, 4)), columns=["clicks", "visits", "age", "score"])
    frame["spend"] = frame @ np.array([2.0, -1.0, 0.5, 1.5]) + rng.normal(scale=0.3, size=rows)
    return frame.to_csv(index=False).encode()


def _regions_csv(rows: int = 6000) -> bytes:
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"visits": rng.uniform(0, 10, size=rows), "region": rng.choice(["north", "south"], size=rows)})
    frame["spend"] = 2 * frame["visits"] + (frame["region"] == "north") + rng.normal(scale=0.3, size=rows)
    return frame.to_csv(index=False).encode()


def test_an_upload_with_weak_privacy_gets_guidance_and_its_fix_applies():
    """The upload's default target is a share of the gain and every run carries the preparation's δ: guidance
    appears (it never did on an upload) and its looser target is a smaller share, one click away."""
    at = uploaded(_regions_csv(), target="kappa", budget="100")
    assert_clean(at)
    texts = [shown(m.value) for m in at.markdown]
    assert any(t.startswith("**What would lower it**") for t in texts)
    [fix] = [t for t in texts if t.startswith("**Keep a smaller share")]
    assert not any(t.startswith("**Accept excess risk") for t in texts)
    share = int(re.search(r"(\d+)% of the gain", fix).group(1))
    at.button(key="guidance.fix.0").click().run()
    assert_clean(at)
    assert at.select_slider(key="explorer.kappa").value == (100 - share) / 100
    assert at.query_params["kappa"] == f"{(100 - share) / 100:g}"
