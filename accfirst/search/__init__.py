"""Choosing a privacy level for an accuracy target, and many runs of it (docs/mathematics.md#the-theory-approach,
docs/mathematics.md#noise-reduction, docs/mathematics.md#interactiveabovethreshold,
docs/mathematics.md#the-doubling-method, docs/mathematics.md#the-epsilon-grid, docs/mathematics.md#what-a-run-reports).

``methods`` (noise reduction, doubling, the theory run), ``grid`` (the ε grid),
``experiments`` (many runs → one tidy frame) and ``sweep`` (the same over every core).
"""
