"""The one way a page draws a plotly figure: the same toolbar and responsive width everywhere."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

PLOTLY_CONFIG = {"displaylogo": False, "responsive": True}


def show_chart(figure: go.Figure, key: str) -> None:
    """Draw ``figure`` under the widget ``key`` with the app's chart configuration."""
    st.plotly_chart(figure, config=PLOTLY_CONFIG, key=key)
