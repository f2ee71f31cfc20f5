"""The glossary: every term the issue names is there, once, with a computed example."""

from __future__ import annotations

from accfirst.glossary import GLOSSARY
from accfirst.interpret import format_exp_epsilon


def test_every_required_term_is_explained_once():
    symbols = " ".join(f"{t.term} {t.symbol}" for t in GLOSSARY)
    for needed in ("ε", "e^ε", "Ex-post", "Excess risk", "α", "γ", "λ", "T", "Calibration", "Fallback", "δ"):
        assert needed in symbols, needed
    terms = [t.term for t in GLOSSARY]
    assert len(terms) == len(set(terms))
    assert all(len(t.plain) > 60 for t in GLOSSARY)


def test_the_risk_factor_example_is_computed():
    risk_factor = next(t for t in GLOSSARY if t.symbol == "e^ε")
    assert f"e^ε = {format_exp_epsilon(1.0)}" in risk_factor.plain and "2.72" in risk_factor.plain
