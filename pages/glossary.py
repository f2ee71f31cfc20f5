"""Glossary: the words the app uses, in plain language (``accfirst.glossary``)."""

from __future__ import annotations

import streamlit as st

from accfirst.glossary import GLOSSARY
from ui.frame import ensure_frame

ensure_frame()
st.title("Glossary")
st.caption("The words this app uses, in plain language. Each is explained where it appears too (hover the ⓘ).")
for entry in GLOSSARY:
    with st.container(border=True):
        symbol = f" — {entry.symbol}" if entry.symbol else ""
        st.markdown(f"**{entry.term}**{symbol}")
        st.write(entry.plain)
