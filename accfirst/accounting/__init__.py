"""Many analyses, one budget (docs/mathematics.md#many-analyses-one-budget,
docs/mathematics.md#counts-to-a-relative-error; derived, consistent with Rogers et al. 2023).

``filters``: privacy filters that admit adaptively chosen rounds under one (ε, δ) budget
— ex-post private rounds (accuracy-first searches), zCDP and Brownian noise-reduction
rounds, or both concurrently. ``counts``: releasing counts to a target relative error
inside such a budget, noise reduction against doubling.
"""
