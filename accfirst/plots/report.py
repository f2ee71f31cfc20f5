"""The offline HTML report: a self-contained page of settings, a table and figures that works without a network and
follows the reader's light or dark preference (docs/reading-the-charts.md#the-alpha-sweep).

The sweep's report (``accfirst.plots.paper.html_report``), the relative targets' and the counts' are such pages.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from plotly.utils import PlotlyJSONEncoder

from accfirst.docs import docs_reference
from accfirst.interpret import format_epsilon


def _report_templates() -> dict[str, dict[str, Any]]:
    """plotly's white and dark templates with transparent backgrounds, so the page's colours show through."""
    templates = {}
    for mode, name in (("light", "plotly_white"), ("dark", "plotly_dark")):
        template = pio.templates[name].to_plotly_json()
        template["layout"].update(paper_bgcolor="rgba(0,0,0,0)", plot_bgcolor="rgba(0,0,0,0)")
        templates[mode] = template
    return templates


def _table_html(table: pd.DataFrame) -> str:
    """A table for reading: ε with 3 significant digits, shares as percentages, other numbers as %g."""
    shown = table.copy()
    for column in shown.columns:
        if column.endswith("median ε"):
            shown[column] = [format_epsilon(v) if not math.isnan(v) else "" for v in shown[column]]
        elif column.endswith("fallback share"):
            shown[column] = [f"{v:.0%}" if not math.isnan(v) else "" for v in shown[column]]
    return shown.to_html(index=False, border=0, classes="results", float_format=lambda v: f"{v:g}")


# The report follows the reader's light/dark preference, in the app's colours (Streamlit's
# defaults and the app's primary colour); charts switch template with it.
_REPORT_CSS = """
:root { color-scheme: light dark; --bg: #ffffff; --fg: #31333f; --line: #e6e9ef; --accent: #0072b2;
        --panel: #f0f2f6; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0e1117; --fg: #fafafa; --line: #31333f; --accent: #56b4e9; --panel: #262730; }
}
* { box-sizing: border-box; }
body { background: var(--bg); color: var(--fg); margin: 0 auto; max-width: 1100px; padding: 1rem;
       font-family: "Source Sans Pro", "Source Sans 3", system-ui, -apple-system, "Segoe UI", sans-serif;
       line-height: 1.5; overflow-wrap: anywhere; }
h1 { font-size: clamp(1.6rem, 6vw, 2.4rem); line-height: 1.2; margin: 0.5rem 0 1rem; }
h2 { font-size: clamp(1.25rem, 4.5vw, 1.6rem); margin-top: 2rem; }
a { color: var(--accent); }
.note { background: var(--panel); border-left: 4px solid var(--accent); padding: 0.6rem 0.9rem; border-radius: 4px; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 0.5rem 0; font-size: 0.9rem; overflow-wrap: normal; }
th, td { padding: 0.25rem 0.7rem; text-align: right; border-bottom: 1px solid var(--line); vertical-align: top; }
table.results td { white-space: nowrap; }
table.settings th, table.settings td { text-align: left; }
table.settings td { overflow-wrap: anywhere; }
.figure { margin: 1.5rem 0; width: 100%; }
ol.steps { padding-left: 1.4rem; }
"""

_REPORT_SCRIPT = """
(function () {
  var templates = %s;
  var query = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  function apply() {
    var template = templates[query && query.matches ? "dark" : "light"];
    document.querySelectorAll(".plotly-graph-div").forEach(function (chart) {
      if (chart.data) { Plotly.react(chart, chart.data, Object.assign({}, chart.layout, {template: template})); }
    });
  }
  if (query && query.addEventListener) { query.addEventListener("change", apply); }
  if (document.readyState === "complete") { apply(); } else { window.addEventListener("load", apply); }
})();
"""


def html_page(
    title: str,
    heading: str,
    intro: str,
    settings: Mapping[str, object],
    table_heading: str,
    table: pd.DataFrame,
    figures: Sequence[go.Figure],
    preparation: Sequence[str] = (),
) -> str:
    """A self-contained HTML report: a heading, an introduction (HTML), the settings, the data preparation
    (when given), one table and the figures.

    plotly.js is embedded once, in the first figure, so the file works offline. The page
    reads well from phone width up and follows the reader's light or dark preference,
    charts included.
    """
    divs = []
    for i, fig in enumerate(figures):
        # No template in the figures: the page's script applies the light or dark one (validating a
        # template per figure in Python would take a second each).
        fig.update_layout(template="none")
        html_div = fig.to_html(
            full_html=False,
            include_plotlyjs=(i == 0),
            config={"responsive": True, "displaylogo": False},
            default_width="100%",
            default_height=f"{fig.layout.height or 560}px",
        )
        divs.append(f'<div class="figure">{html_div}</div>')
    settings_rows = "".join(
        f"<tr><th>{html.escape(str(key))}</th><td>{html.escape(str(value))}</td></tr>"
        for key, value in settings.items()
    )
    steps = "".join(f"<li>{html.escape(step)}</li>" for step in preparation)
    preparation_html = (
        f'<h2>Data preparation</h2>\n<ol class="steps">{steps}</ol>\n'
        f"<p>What each step does and which ones read the data: {html.escape(docs_reference('data'))}.</p>"
        if steps
        else ""
    )
    script = _REPORT_SCRIPT % json.dumps(_report_templates(), cls=PlotlyJSONEncoder)
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>{_REPORT_CSS}</style>
</head>
<body>
<h1>{html.escape(heading)}</h1>
{intro}
<h2>Settings</h2>
<div class="scroll"><table class="settings">{settings_rows}</table></div>
{preparation_html}
<h2>{html.escape(table_heading)}</h2>
<div class="scroll">{_table_html(table)}</div>
<h2>Figures</h2>
{"".join(divs)}
<script>{script}</script>
</body>
</html>
"""
