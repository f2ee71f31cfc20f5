"""The live classroom poll's shared state: one registry of rooms per server.

Every session of the server sees the same ``PollRooms`` (``st.cache_resource``): the
teacher's session opens a room, the students' sessions add randomized answers to it. The
registry lives in memory only and holds nothing but each room's protocol and counts
(``accfirst.teaching.poll``). A student's own session remembers which rooms it has answered,
so one phone answers once; that memory never reaches the registry.
"""

from __future__ import annotations

import streamlit as st

from accfirst.teaching import PollRooms

ROOM_PARAMETER = "room"
TEACHER_ROOM = "poll.teacher_room"


@st.cache_resource(show_spinner=False)
def poll_rooms() -> PollRooms:
    """The server's registry of live polls (rooms close after 2 hours without answers)."""
    return PollRooms()


def answered_key(code: str) -> str:
    """The session-state key that records that this session answered in room ``code``."""
    return f"poll.answered.{code}"
