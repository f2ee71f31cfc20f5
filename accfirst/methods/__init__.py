"""The accuracy-first methods, one class per file, and their registry (SPEC §4–§8, §14, §17).

``nr`` (noise reduction, Algorithms 3 and 5), ``doubling`` (Algorithm 4), ``theory`` (the
inverted utility theorem), ``gibbs`` (the Gibbs posterior), on the small base of ``base``;
``options`` (the search options of a batch), ``grid`` (the ε grid); ``registry`` (``METHODS``).
"""
