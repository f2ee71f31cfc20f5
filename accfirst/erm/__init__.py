"""The learning problems and their private hypotheses (docs/mathematics.md#the-two-learning-problems,
docs/mathematics.md#private-hypothesis-generators, docs/mathematics.md#the-theory-approach).

``problems`` (ridge and logistic ERM), ``trust_region`` (the exact solve behind
covariance perturbation), ``generators`` (covariance and output perturbation) and
``theory`` (the inverted utility theorems).
"""
