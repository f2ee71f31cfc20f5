"""The live classroom poll's shared state: one registry of rooms per server.

Every session of the server sees the same ``PollRooms`` (``st.cache_resource``): the
teacher's session opens a room, the students' sessions add randomized answers to it. The
registry lives in memory only and holds nothing but each room's protocol, counts,
refusals and the digests of the answer tokens used (``accfirst.teaching.poll``).

A student's tab keeps its answer token in its address (``?room=…&token=…``): a reload
keeps it, so the room refuses a second answer from the tab and the page shows that it has
answered; a new tab gets a new token.
"""

from __future__ import annotations

import streamlit as st

from accfirst.teaching import PollRooms

ROOM_PARAMETER = "room"
TOKEN_PARAMETER = "token"
TEACHER_ROOM = "poll.teacher_room"


@st.cache_resource(show_spinner=False)
def poll_rooms() -> PollRooms:
    """The server's registry of live polls (rooms close after 2 hours without answers)."""
    return PollRooms()


def tab_token(code: str) -> str:
    """This tab's answer token for the room ``code``: the one in the address, or a new one put there."""
    token = st.query_params.get(TOKEN_PARAMETER)
    if not poll_rooms().valid_token(code, token):
        token = poll_rooms().issue_token(code)
        st.query_params[TOKEN_PARAMETER] = token
    return token
