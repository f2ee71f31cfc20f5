"""Choosing a privacy level for an accuracy target, and many runs of it (SPEC §4–§9).

``methods`` (noise reduction, doubling, the theory run), ``grid`` (the ε grid),
``experiments`` (many runs → one tidy frame) and ``sweep`` (the same over every core).
"""
