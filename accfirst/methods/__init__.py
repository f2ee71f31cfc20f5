"""The accuracy-first methods, one class per file, and their registry (docs/mathematics.md#the-theory-approach,
docs/mathematics.md#the-epsilon-grid, docs/mathematics.md#brownian-noise-reduction,
docs/mathematics.md#the-gibbs-posterior).

``nr`` (noise reduction, Algorithms 3 and 5), ``doubling`` (Algorithm 4), ``theory`` (the
inverted utility theorem), ``gibbs`` (the Gibbs posterior), on the small base of ``base``;
``options`` (the search options of a batch), ``grid`` (the ε grid); ``registry`` (``METHODS``).
"""
