"""The learning problems and their private hypotheses (SPEC §2–§4).

``problems`` (ridge and logistic ERM), ``trust_region`` (the exact solve behind
covariance perturbation), ``generators`` (covariance and output perturbation) and
``theory`` (the inverted utility theorems).
"""
