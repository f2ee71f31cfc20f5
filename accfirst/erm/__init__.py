"""The learning problems and their private hypotheses (docs/mathematics.md#the-two-learning-problems,
docs/mathematics.md#private-hypothesis-generators, docs/mathematics.md#the-theory-approach).

``problem`` (what ridge and logistic ERM share), ``ridge``, ``logistic``, ``shape`` (a problem's public
constants before its rows are read), ``problems`` (the problem of each task), ``trust_region`` (the exact solve behind
covariance perturbation), ``generators`` (covariance and output perturbation) and
``theory`` (the inverted utility theorems).
"""
