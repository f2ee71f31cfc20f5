"""Where a page's noise comes from: a seed for a simulation, the operating system for a release on real data.

A simulation — data generated from public parameters, or synthetic counts — keeps a seed, 0 by
default and in the link: the same link gives the same numbers. A release computed from a real
table (an upload or a built-in real table) draws its noise from the operating system by default:
drawn once per set of choices in this session and never shown, so that a rerun shows the same
release rather than a new one. A visitor may set a seed there, and then every output says it is
a repeatable run, not a private release. A link never carries a seed for a release on an upload,
and a seed that a link brings is not used there.
"""

from __future__ import annotations

from collections.abc import Hashable

import streamlit as st

from accfirst.validation import REPEATABLE
from ui.cache import session_secret
from ui.link_notice import report_ignored
from ui.settings import IntSetting, OptionalInt, Setting, restore_from_url, written_by_the_app

LINK_SEED_REFUSED = (
    "a link cannot set the noise of a release on your upload: it comes from the operating system (set a seed "
    "on the page for a repeatable run)."
)


def seed_setting(scope: str, label: str, release: bool) -> Setting:
    """The seed box of a page: a seed (0) for a simulation; for a release, blank (the operating system) by default.

    The release's box keeps its own state, so a seed chosen for a simulation never carries over to real data.
    """
    if not release:
        return IntSetting(scope, "seed", label, 0, low=0, high=2**32 - 1, box=True)
    return OptionalInt(
        f"{scope}.release",
        "seed",
        f"{label} (blank: from the operating system)",
        None,
        placeholder="operating system",
        help=f"A release on real data draws its noise from the operating system. A seed makes it repeatable: a "
        f"{REPEATABLE}.",
    )


def link_settings(seed: Setting, *, release: bool, upload: bool) -> tuple[Setting, ...]:
    """The seed's place in the URL: none for a release on an upload.

    A seed there is dropped; it is reported only when a link brought it, not when a page of this session wrote it
    (the simulation's seed, still in the address after a switch to "Your data").
    """
    if not (release and upload):
        return (seed,)
    if seed.key in st.query_params:
        if not written_by_the_app(seed.key):
            report_ignored([f"{seed.key}: {LINK_SEED_REFUSED}"])
        del st.query_params[seed.key]
    return ()


def page_seed(scope: str, label: str, *, release: bool, upload: bool) -> tuple[Setting, tuple[Setting, ...]]:
    """A page's seed box and its place in the URL (``seed_setting``, ``link_settings``), restored from the link."""
    seed = seed_setting(scope, label, release)
    linked = link_settings(seed, release=release, upload=upload)
    restore_from_url(linked)
    return seed, linked


def noise_seed(seed: int | None, key: Hashable) -> int:
    """The seed to run with: the visitor's, or operating-system entropy drawn once per ``key`` in this session.

    ``key`` names the whole question: every setting a release reads besides what its own seed key holds
    (a run's method, target and trial, ``accfirst.search.experiments.trial_rng``). One secret serving two
    questions would give both the same noise, and two releases with one noise reveal what the noise hides
    (docs/mathematics.md#a-private-radius); the same question asked again is the same release.
    """
    return seed if seed is not None else session_secret(key).entropy


def repeatable_warning(where: object, seed: int | None, release: bool) -> None:
    """Say that a release run from a seed the visitor set is a repeatable run, not a private release."""
    if release and seed is not None:
        where.warning(f"Seed {seed}: {REPEATABLE}. Anyone with the seed can replay the noise.", icon="🔁")
