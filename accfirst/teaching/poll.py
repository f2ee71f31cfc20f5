"""Live classroom polls by randomized response: rooms in memory, randomized answers only.

A teacher opens a room with a protocol (p, q) and gets a short code; students open the
room's link on their phones, flip a real coin (or roll a die), and submit only the
randomized answer. A room holds the protocol, how many "yes" and how many answers arrived,
when it was last used, how many answers it refused and why, and a digest of each answer
token that was used — no names, no true answers, no session identifiers, and nothing that
links a token to the answer it gave. Rooms close after a time without activity, and both
the number of rooms and the answers per room are capped, so a public server cannot be
filled up.

One answer per browser. An answer carries a token: a nonce signed with the room's secret key, so
that the room recognises its own tokens without storing them and refuses made-up ones. A browser's
token is derived from an identifier the browser keeps (``browser_token``: a random value the app
sets once in a cookie): the nonce is a keyed hash of it with the room's key, so the same browser
gets the same token in the room however it comes back — a reload, the Back button, the link pasted
again, another tab — and the room refuses its second answer (``submit``); two rooms cannot link
it. ``issue_token`` gives a random one, for a client that keeps it itself. That is as far as a
browser allows: one answer per browser (another browser, or one whose cookies were cleared, is
another), not per person.

Floods. A room accepts answers at the pace a class gives them — a burst of ``burst``
answers at once (a class of 300 answering in the same second), then ``rate`` a second —
and refuses the rest (a token bucket), so a script cannot pour thousands of answers in.
Each refusal is counted by reason for the teacher's view. Answers that do not fit the
protocol at all (20 "yes" out of 20 under the two coins) are flagged by the snapshot
(``RandomizedResponse.misfit``) rather than refused: no single answer can be told apart.

Room codes, room keys and nonces are security tokens (guessing one lets a stranger add
answers or block a student), so they come from the operating system's cryptographic
generator (``secrets``), not from a seeded numpy generator: they must not be reproducible.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from accfirst.errors import AccFirstError
from accfirst.teaching.randomized_response import Misfit, RandomizedResponse
from accfirst.validation import validate_count, validate_positive

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no I, L, O, 0, 1: easy to read aloud
CODE_LENGTH = 6
NONCE_BYTES = 16
TOKEN_LENGTH = 43  # base64url of the nonce and its 16-byte signature, without padding
# What a browser's identifier may be (it comes from a cookie, which the visitor controls).
BROWSER_ID = re.compile(r"[A-Za-z0-9_-]{16,64}", re.ASCII)

# Why a room refused an answer, as the teacher reads it.
REPEAT = "a second answer from the same browser"
FLOOD = "more answers at once than a class sends"
FULL = "the poll was full"
FORGED = "an answer token this poll did not issue"


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


class AnswerRefused(AccFirstError):
    """A room refused an answer; ``reason`` is one of the module's reasons (``REPEAT``, ``FLOOD``, …)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class PollSnapshot:
    """A room as everyone may see it: the protocol, the counts, the live estimate and the refusals
    (docs/mathematics.md#teaching-mechanisms).

    ``estimate`` (unbiased, so it may leave [0, 1] while answers are few) is ``None`` until
    the first answer. ``interval`` is the 95% interval for the true share; it is ``None``
    until the first answer and whenever ``misfit`` says that the answers do not fit the
    protocol (no share fits, so an interval would shrink to a point at 0 or 1).
    ``refused`` holds (reason, count) pairs, most frequent first.
    """

    code: str
    protocol: RandomizedResponse
    yes: int
    answers: int
    estimate: float | None
    interval: tuple[float, float] | None
    misfit: Misfit | None = None
    refused: tuple[tuple[str, int], ...] = ()

    @property
    def clipped_estimate(self) -> float | None:
        """The estimate moved into [0, 1] (what is shown when the answers do not fit the protocol)."""
        return None if self.estimate is None else min(max(self.estimate, 0.0), 1.0)


@dataclass
class _Room:
    """Everything a room stores (see the module's docstring)."""

    protocol: RandomizedResponse
    key: bytes
    last_active: float
    allowance: float
    yes: int = 0
    answers: int = 0
    used: set[bytes] = field(default_factory=set)
    refused: Counter[str] = field(default_factory=Counter)


class PollRooms:
    """A thread-safe registry of live polls, shared by every session of one server.

    Parameters
    ----------
    max_rooms : rooms open at once; opening one more is refused until some expire.
    max_answers : answers a room accepts.
    idle_seconds : a room with no answer or opening for this long is closed (default 2 h).
    burst : answers a room accepts at once (default 300: a large class answering together).
    rate : answers a second a room accepts after a burst (default 5: 300 a minute).
    clock : seconds, monotonic (for tests).
    """

    def __init__(
        self,
        *,
        max_rooms: int = 200,
        max_answers: int = 2000,
        idle_seconds: float = 7200.0,
        burst: int = 300,
        rate: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_rooms = validate_count("max_rooms", max_rooms, 1)
        self.max_answers = validate_count("max_answers", max_answers, 1)
        self.idle_seconds = validate_positive("idle_seconds", idle_seconds)
        self.burst = validate_count("burst", burst, 1)
        self.rate = validate_positive("rate", rate)
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
            self._rooms[code] = _Room(protocol, secrets.token_bytes(32), self._clock(), float(self.burst))
            return code

    def issue_token(self, code: str) -> str:
        """A new, random answer token in the room ``code`` (for a client that keeps it itself)."""
        code = parse_room_code(code)
        with self._lock:
            room = self._room(code)
            nonce = secrets.token_bytes(NONCE_BYTES)
            return base64.urlsafe_b64encode(nonce + _signature(room.key, nonce)).rstrip(b"=").decode()

    def browser_token(self, code: str, browser: str) -> str:
        """The answer token of the browser that keeps the identifier ``browser`` in the room ``code``: always the
        same for the same browser and room, unrelated across rooms (a keyed hash with the room's key)."""
        code = parse_room_code(code)
        if not isinstance(browser, str) or not BROWSER_ID.fullmatch(browser):
            raise AccFirstError("a browser identifier is 16 to 64 letters, digits, '-' or '_'")
        with self._lock:
            room = self._room(code)
            nonce = hmac.new(room.key, b"browser:" + browser.encode(), hashlib.sha256).digest()[:NONCE_BYTES]
            return base64.urlsafe_b64encode(nonce + _signature(room.key, nonce)).rstrip(b"=").decode()

    def valid_token(self, code: str, token: object) -> bool:
        """Whether ``token`` is an answer token the room ``code`` issued (used or not)."""
        code = parse_room_code(code)
        with self._lock:
            return _nonce(self._room(code), token) is not None

    def has_answered(self, code: str, token: object) -> bool:
        """Whether the tab holding ``token`` has answered in the room ``code``."""
        code = parse_room_code(code)
        with self._lock:
            room = self._room(code)
            nonce = _nonce(room, token)
            return nonce is not None and _digest(nonce) in room.used

    def submit(self, code: str, answer: bool, token: object) -> PollSnapshot:
        """Add one randomized answer (``True`` = "yes") from the tab holding ``token`` to the room ``code``.

        Raises ``AnswerRefused`` (an ``AccFirstError``), and counts the refusal, for a token
        the room did not issue, a token that has answered already, a full room or an answer
        beyond the room's pace (``burst``, ``rate``).
        """
        if not isinstance(answer, bool):
            raise AccFirstError("an answer is True (yes) or False (no)")
        code = parse_room_code(code)
        with self._lock:
            room = self._room(code)
            now = self._clock()
            nonce = _nonce(room, token)
            if nonce is None:
                raise self._refuse(room, FORGED, "This link's answer token is not from this poll: open the link again.")
            if _digest(nonce) in room.used:
                raise self._refuse(room, REPEAT, "This browser has answered this poll already: one answer each.")
            if room.answers >= self.max_answers:
                raise self._refuse(
                    room, FULL, f"This poll is full ({self.max_answers} answers); ask the teacher for a new one."
                )
            room.allowance = min(float(self.burst), room.allowance + (now - room.last_active) * self.rate)
            room.last_active = now
            if room.allowance < 1:
                raise self._refuse(room, FLOOD, "Too many answers are arriving at once: wait a few seconds, then send.")
            room.allowance -= 1
            room.used.add(_digest(nonce))
            room.yes += answer
            room.answers += 1
            return self._snapshot(code, room)

    def snapshot(self, code: str) -> PollSnapshot:
        """The room's protocol, counts, live estimate and refusals."""
        code = parse_room_code(code)
        with self._lock:
            return self._snapshot(code, self._room(code))

    def close_room(self, code: str) -> None:
        """Close the room now (its counts are gone)."""
        code = parse_room_code(code)
        with self._lock:
            self._rooms.pop(code, None)

    @staticmethod
    def _refuse(room: _Room, reason: str, message: str) -> AnswerRefused:
        room.refused[reason] += 1
        return AnswerRefused(reason, message)

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
        refused = tuple(room.refused.most_common())
        if room.answers == 0:
            return PollSnapshot(code, room.protocol, 0, 0, None, None, None, refused)
        estimate = room.protocol.estimate(room.yes / room.answers)
        misfit = room.protocol.misfit(room.yes, room.answers)
        interval = None if misfit else room.protocol.confidence_interval(room.yes, room.answers)
        return PollSnapshot(code, room.protocol, room.yes, room.answers, estimate, interval, misfit, refused)


def _new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def _signature(key: bytes, nonce: bytes) -> bytes:
    return hmac.new(key, nonce, hashlib.sha256).digest()[:16]


def _digest(nonce: bytes) -> bytes:
    return hashlib.sha256(nonce).digest()[:16]


def _nonce(room: _Room, token: object) -> bytes | None:
    """The nonce of ``token`` when the room signed it, else ``None`` (any text from a link is safe here)."""
    if not isinstance(token, str) or len(token) != TOKEN_LENGTH or not token.isascii():
        return None
    try:
        raw = base64.urlsafe_b64decode(token + "=")
    except (binascii.Error, ValueError):
        return None
    nonce, signature = raw[:NONCE_BYTES], raw[NONCE_BYTES:]
    return nonce if hmac.compare_digest(signature, _signature(room.key, nonce)) else None
