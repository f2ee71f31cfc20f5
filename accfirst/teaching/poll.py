"""Live classroom polls by randomized response: rooms in memory, randomized answers only.

A teacher opens a room with a protocol (p, q) and gets a short code; students open the
room's link on their phones, flip a real coin (or roll a die), and submit only the
randomized answer. A room holds nothing else: no names, no true answers, no session
identifiers — only how many "yes" and how many answers arrived, the protocol, and when it
was last used. Rooms close after a time without activity, and both the number of rooms
and the answers per room are capped, so a public server cannot be filled up.

Room codes are security tokens (guessing one lets a stranger add answers), so they come
from the operating system's cryptographic generator (``secrets``), not from a seeded
numpy generator: they must not be reproducible.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from accfirst.errors import AccFirstError
from accfirst.teaching.randomized_response import RandomizedResponse
from accfirst.validation import validate_count, validate_positive

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no I, L, O, 0, 1: easy to read aloud
CODE_LENGTH = 6


def parse_room_code(text: object) -> str:
    """The room code in ``text`` (case and surrounding spaces ignored), or ``AccFirstError``.

    The message never repeats the text, which may come from a hostile link.
    """
    code = text.strip().upper() if isinstance(text, str) else ""
    if len(code) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in code):
        raise AccFirstError(
            f"A room code is {CODE_LENGTH} letters and digits (like K7QM2X, without I, L, O, 0 or 1); "
            "this one is not valid. Check the code the teacher shows."
        )
    return code


@dataclass(frozen=True)
class PollSnapshot:
    """A room as everyone may see it: the protocol, the counts and the live estimate (SPEC §18).

    ``estimate`` and ``interval`` are ``None`` until the first answer arrives.
    """

    code: str
    protocol: RandomizedResponse
    yes: int
    answers: int
    estimate: float | None
    interval: tuple[float, float] | None


@dataclass
class _Room:
    """Everything a room stores: the protocol, two counts and the time of the last activity."""

    protocol: RandomizedResponse
    yes: int
    answers: int
    last_active: float


class PollRooms:
    """A thread-safe registry of live polls, shared by every session of one server.

    Parameters
    ----------
    max_rooms : rooms open at once; opening one more is refused until some expire.
    max_answers : answers a room accepts.
    idle_seconds : a room with no answer or opening for this long is closed (default 2 h).
    clock : seconds, monotonic (for tests).
    """

    def __init__(
        self,
        *,
        max_rooms: int = 200,
        max_answers: int = 2000,
        idle_seconds: float = 7200.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_rooms = validate_count("max_rooms", max_rooms, 1)
        self.max_answers = validate_count("max_answers", max_answers, 1)
        self.idle_seconds = validate_positive("idle_seconds", idle_seconds)
        self._clock = clock
        self._rooms: dict[str, _Room] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._rooms)

    def open_room(self, protocol: RandomizedResponse) -> str:
        """Open a room for ``protocol``; returns its new code."""
        if not isinstance(protocol, RandomizedResponse):
            raise AccFirstError("a room needs a RandomizedResponse protocol")
        protocol.instructions()  # a protocol students cannot play with a coin or a die is refused here
        with self._lock:
            self._expire()
            if len(self._rooms) >= self.max_rooms:
                raise AccFirstError("Too many polls are open on this server right now; try again in a while.")
            code = _new_code()
            while code in self._rooms:
                code = _new_code()
            self._rooms[code] = _Room(protocol, 0, 0, self._clock())
            return code

    def submit(self, code: str, answer: bool) -> PollSnapshot:
        """Add one randomized answer (``True`` = "yes") to the room ``code``."""
        if not isinstance(answer, bool):
            raise AccFirstError("an answer is True (yes) or False (no)")
        code = parse_room_code(code)
        with self._lock:
            room = self._room(code)
            if room.answers >= self.max_answers:
                raise AccFirstError(f"This poll is full ({self.max_answers} answers); ask the teacher for a new one.")
            room.yes += answer
            room.answers += 1
            room.last_active = self._clock()
            return self._snapshot(code, room)

    def snapshot(self, code: str) -> PollSnapshot:
        """The room's protocol, counts and live estimate."""
        code = parse_room_code(code)
        with self._lock:
            return self._snapshot(code, self._room(code))

    def close_room(self, code: str) -> None:
        """Close the room now (its counts are gone)."""
        code = parse_room_code(code)
        with self._lock:
            self._rooms.pop(code, None)

    def _room(self, code: str) -> _Room:
        self._expire()
        room = self._rooms.get(code)
        if room is None:
            hours = self.idle_seconds / 3600
            raise AccFirstError(
                f"No poll is open with this code: it may be mistyped, closed, or expired (polls close after "
                f"{hours:g} hour{'s' if hours != 1 else ''} without answers)."
            )
        return room

    def _expire(self) -> None:
        now = self._clock()
        for code in [c for c, room in self._rooms.items() if now - room.last_active >= self.idle_seconds]:
            del self._rooms[code]

    @staticmethod
    def _snapshot(code: str, room: _Room) -> PollSnapshot:
        if room.answers == 0:
            return PollSnapshot(code, room.protocol, 0, 0, None, None)
        estimate = room.protocol.estimate(room.yes / room.answers)
        interval = room.protocol.confidence_interval(room.yes, room.answers)
        return PollSnapshot(code, room.protocol, room.yes, room.answers, estimate, interval)


def _new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
