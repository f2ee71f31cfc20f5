"""The report's browser tests share the app tests' Chromium fixture."""

from tests.app.test_browser import browser  # noqa: F401 (a fixture, used by name)
