"""Privacy mechanisms that know nothing of learning (SPEC §5–§7, §12).

``noise_reduction`` (Laplace noise reduction, Algorithm 1), ``above_threshold``
(InteractiveAboveThreshold) and ``calibration`` (the calibrations of that test and of
the doubling test, exact ones included).
"""
