"""scikit-learn estimators: accuracy-first ridge and logistic regression, and a public-bound scaler.

docs/mathematics.md#setting-and-notation, docs/mathematics.md#the-two-learning-problems,
docs/mathematics.md#private-hypothesis-generators (the problems), docs/mathematics.md#noise-reduction,
docs/mathematics.md#interactiveabovethreshold, docs/mathematics.md#the-doubling-method,
docs/mathematics.md#the-epsilon-grid, docs/mathematics.md#what-a-run-reports (the search and what a run reports),
docs/data-preparation.md#scaling-into-the-unit-ball (scaling), docs/mathematics.md#a-public-norm-bound (public radius),
docs/mathematics.md#brownian-noise-reduction (Gaussian noise), docs/mathematics.md#the-gibbs-posterior (Gibbs
posterior). ``fit`` builds the ERM problem of the training rows and runs one accuracy-first search (``search`` with
``SearchOptions``) toward the estimator's target. Without one named, that is the task's default, the command line's and
the app's (``DEFAULT_TARGETS``): the released model's in-sample R² ≥ 0.8 (ridge) or accuracy ≥ 0.9 (logistic) with
probability ≥ 1 − γ, certified by noise reduction with λ chosen privately from a public grid
(docs/mathematics.md#a-target-in-the-units-people-read, docs/mathematics.md#choosing-λ-under-the-guarantee); ``r2``
(ridge) or ``accuracy`` (logistic) names another goal, ``lam`` a fixed λ, ``ceiling`` the most the search may spend. A
target that no data of X's size could meet raises ``TargetRefused`` (an ``AccFirstError``) before anything is prepared,
read or spent, with the sentence the command line and the app say (docs/mathematics.md#refusals-that-spend-nothing).
``excess_risk`` asks for the paper's target instead, an excess risk α at a fixed λ (every high-probability method);
``kappa`` for a share of the gain: keep at least 1 − κ of what the best model gains over predicting nothing
(docs/mathematics.md#a-relative-accuracy-target); the fit then releases a private bound on that gain, sets α from it
(``alpha_``) and pays ε for it (``epsilon_scale_``). The estimator reports the ex-post ε it paid (``epsilon_``, split into
``epsilon_radius_`` (a private radius, docs/mathematics.md#a-private-radius), ``epsilon_scale_``, ``epsilon_test_`` and
``epsilon_hypothesis_``, with the ``delta_`` of an (ε, δ) guarantee, each a float) and keeps the whole ``RunResult``
(``run_``). With ``random_state=s`` a fit is the run that ``python -m accfirst run --seed s`` makes on the same (scaled)
rows with the same target. When no model passes the test, nothing is released: ``fit`` raises ``NoModelReleased`` (an
``AccFirstError``, so a ``ValueError``) with the run's record and the ε it was charged, and leaves the estimator
unfitted, as scikit-learn leaves an estimator whose ``fit`` failed (docs/mathematics.md#what-a-failed-run-releases); the
exact, non-private minimiser is never released.

The models have no intercept (the paper's). The problems need rows with ‖x‖₁ ≤ 1 and ridge
targets with |y| ≤ 1 (docs/mathematics.md#setting-and-notation). Without stated bounds ``fit`` refuses other rows rather
than clip them silently. With public bounds — stated without looking at the data — rows are divided by them and clipped
into the unit ball (the privacy-safe scaling of docs/data-preparation.md#scaling-into-the-unit-ball), in one of two
places: ``PublicBoundScaler(feature_bound)`` before the estimator in a ``Pipeline``, or the estimator's own
``feature_bound``; a ridge target by the estimator's ``target_bound`` (predictions come back in y's units; a
``Pipeline`` step cannot transform y). Every target (R², accuracy, α) is that of the scaled problem. Only
data-independent steps may precede the estimator in a pipeline: a ``StandardScaler`` reads the data and is not private.

``prepare="private"`` (or a mapping of ``from_frame``'s options: ``schema``, ``prep_epsilon``,
``positive_class``, …) takes a DataFrame with numbers, text and gaps instead and prepares it
privately in ``fit`` (docs/mathematics.md#preparing-the-data-privately; docs/mathematics.md, "Preparing the data
privately"): every statistic is declared or released by a charged mechanism, ``epsilon_`` includes the preparation's
``epsilon_prep_`` (and ``delta_`` its δ), and ``predict`` prepares new rows with the released column plans alone.
"""

from accfirst.estimators.base import (
    SCALING_ADVICE,
    NoModelReleased,
    RepeatableRunWarning,
    TargetRefused,
)
from accfirst.estimators.logistic import AccuracyFirstLogistic
from accfirst.estimators.ridge import AccuracyFirstRidge
from accfirst.estimators.scaler import PublicBoundScaler

__all__ = [
    "SCALING_ADVICE",
    "AccuracyFirstLogistic",
    "AccuracyFirstRidge",
    "NoModelReleased",
    "PublicBoundScaler",
    "RepeatableRunWarning",
    "TargetRefused",
]
