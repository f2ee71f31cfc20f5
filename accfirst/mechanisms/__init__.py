"""Privacy mechanisms that know nothing of learning (SPEC §5–§6).

``noise_reduction`` (Laplace noise reduction, Algorithm 1) and ``above_threshold``
(InteractiveAboveThreshold and its calibrations).
"""
