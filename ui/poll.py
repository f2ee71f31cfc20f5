"""The live classroom poll's shared state and what binds an answer to a browser.

Every session of the server sees the same ``PollRooms`` (``st.cache_resource``): the teacher's session opens a room,
the students' sessions add randomized answers to it. The registry lives in memory only and holds nothing but each
room's protocol, counts, refusals and the digests of the answer tokens used (``accfirst.teaching.poll``).

One answer per browser: the app gives each browser a random identifier once, in a cookie (``BROWSER_COOKIE``, set by a
line of JavaScript since Streamlit can read cookies but not set them), and the room derives the browser's answer
token from it (``PollRooms.browser_token``). A reload, the Back button, the link pasted again or another tab bring
the same cookie, hence the same token, and the room refuses a second answer; until the browser sends the cookie back
(the first visit's session) the session keeps the identifier it set. Nothing ties the identifier to a person: it is
random, and the room stores only a digest of a keyed hash of it.
"""

from __future__ import annotations

import secrets

import streamlit as st

from accfirst.teaching import PollRooms
from accfirst.teaching.poll import BROWSER_ID

ROOM_PARAMETER = "room"
TEACHER_ROOM = "poll.teacher_room"
BROWSER_COOKIE = "accfirst_browser"
BROWSER_STATE = "poll.browser"
# A year: a class's polls over a term come from the same browsers.
COOKIE_SECONDS = 365 * 24 * 3600


@st.cache_resource(show_spinner=False)
def poll_rooms() -> PollRooms:
    """The server's registry of live polls (rooms close after 2 hours without answers)."""
    return PollRooms()


def browser_id() -> str:
    """This browser's identifier: from its cookie, or a new one, set in its cookie and kept by the session."""
    cookie = st.context.cookies.get(BROWSER_COOKIE)
    if isinstance(cookie, str) and BROWSER_ID.fullmatch(cookie):
        st.session_state[BROWSER_STATE] = cookie
        return cookie
    browser: str = st.session_state.setdefault(BROWSER_STATE, secrets.token_urlsafe(24))
    # The identifier is ours (base64url: nothing to escape); the script only stores it for this site.
    st.html(
        f'<script>document.cookie = "{BROWSER_COOKIE}={browser}; path=/; max-age={COOKIE_SECONDS}; SameSite=Lax";'
        "</script>",
        unsafe_allow_javascript=True,
    )
    return browser


def browser_token(code: str) -> str:
    """This browser's answer token in the room ``code``."""
    return poll_rooms().browser_token(code, browser_id())
