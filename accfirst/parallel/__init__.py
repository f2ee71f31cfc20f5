"""Infrastructure that knows nothing of privacy: the worker processes shared by every caller (``pool``)."""
