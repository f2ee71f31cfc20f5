"""Preparation as a sequence of small named steps (docs/mathematics.md#preparing-the-data-privately;
docs/data-preparation.md).

Each step states the metadata it needs, the statistic it reads, its mechanism and the (ε, δ) it
spends, and what it writes into the plan:

==================  ============================  ===================================  =================
step                module                        mechanism                            spends
==================  ============================  ===================================  =================
private kind        ``kind``                      Laplace count difference             weight ¼
declared metadata   ``declared``                  none (the schema)                    0
private median      ``ranges``                    exponential mechanism                weight 1
private range       ``ranges``                    exponential mechanism (|x − median|)  weight 1
centre              ``centre``                    post-processing (the median)         0
private centre      ``centre``                    Laplace, (b − a)/n                   weight ½
gaps                ``gaps``                      post-processing                      0
half-range          ``spread``                    post-processing                      0
private spread      ``spread``                    Laplace, max dev²/n                  weight ½
private levels      ``levels``                    Laplace counts over a threshold      weight 4, δ
labels, target      ``target``                    declared / post-processing           0
unit-ball scaling   ``scaling``                   post-processing                      0
==================  ============================  ===================================  =================

``identifiers`` leaves identifier columns out of the default features, from names and the schema alone;
``private`` composes the steps; ``build`` turns rows into features from the plans the steps wrote, for
both preparations; ``evaluation`` is the evaluation-only preparation: the same plans and build, its
columns and rows chosen by reading the data (``usable``) and its statistics read exactly, without
noise (``exact``: evaluation only, ε = ∞); ``noise`` is the one place the steps draw noise;
``budget`` splits ε_prep and δ_prep.
"""
