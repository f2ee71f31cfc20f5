"""Privacy mechanisms that know nothing of learning (docs/mathematics.md#noise-reduction,
docs/mathematics.md#the-doubling-method, docs/mathematics.md#calibrations).

``noise_reduction`` (Laplace noise reduction, Algorithm 1), ``above_threshold``
(InteractiveAboveThreshold) and ``calibration`` (the calibrations of that test and of
the doubling test, exact ones included).
"""
