"""Typed exceptions of the accfirst package.

Every error a user can cause (a bad parameter, a malformed dataset) is a
``ValueError`` subclass whose message says what to change; the app shows the
message as it is.
"""


class AccFirstError(ValueError):
    """A parameter or input that the accuracy-first algorithms cannot use."""


class DataError(AccFirstError):
    """A dataset (built-in, uploaded or passed in) that cannot be prepared (docs/mathematics.md#setting-and-notation,
    docs/data-preparation.md#scaling-into-the-unit-ball)."""
