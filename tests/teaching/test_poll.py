"""The live-poll registry: randomized answers only, expiry, caps, hostile codes, threads."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from accfirst import AccFirstError
from accfirst.teaching import TWO_COINS, PollRooms, RandomizedResponse, parse_room_code
from accfirst.teaching.poll import CODE_ALPHABET, CODE_LENGTH

HOSTILE = [
    "",
    "   ",
    "abc",
    "ABCDEFG",
    "ABCDE0",
    "ABCDE1",
    "[x](http://e)",
    "<script>alert(1)</script>",
    "**BOLD**",
    "ABC\nDE",
    "ÅBCDEF",
    "A" * 10_000,
    None,
    123456,
    b"ABCDEF",
]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_answers_add_up_to_the_estimate() -> None:
    rooms = PollRooms()
    code = rooms.open_room(TWO_COINS)
    assert len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET)
    empty = rooms.snapshot(code)
    assert (empty.yes, empty.answers, empty.estimate, empty.interval) == (0, 0, None, None)
    for answer in [True] * 7 + [False] * 13:
        rooms.submit(code, answer)
    shown = rooms.snapshot(f"  {code.lower()} ")
    assert (shown.yes, shown.answers) == (7, 20)
    assert shown.estimate == pytest.approx(TWO_COINS.estimate(7 / 20))
    assert shown.interval == TWO_COINS.confidence_interval(7, 20)


def test_a_room_stores_only_the_protocol_the_counts_and_a_time() -> None:
    rooms = PollRooms()
    code = rooms.open_room(RandomizedResponse(4 / 6, 0.5))
    rooms.submit(code, True)
    (room,) = rooms._rooms.values()
    assert {f.name for f in dataclasses.fields(room)} == {"protocol", "yes", "answers", "last_active"}
    assert (room.yes, room.answers) == (1, 1)


def test_rooms_expire_after_inactivity() -> None:
    clock = Clock()
    rooms = PollRooms(idle_seconds=100, clock=clock)
    code = rooms.open_room(TWO_COINS)
    clock.now = 90
    rooms.submit(code, False)  # activity keeps it open
    clock.now = 180
    assert rooms.snapshot(code).answers == 1
    clock.now = 190
    with pytest.raises(AccFirstError, match="expired"):
        rooms.snapshot(code)
    assert len(rooms) == 0


def test_caps_on_rooms_and_answers() -> None:
    rooms = PollRooms(max_rooms=2, max_answers=3)
    first = rooms.open_room(TWO_COINS)
    rooms.open_room(TWO_COINS)
    with pytest.raises(AccFirstError, match="Too many polls"):
        rooms.open_room(TWO_COINS)
    for _ in range(3):
        rooms.submit(first, True)
    with pytest.raises(AccFirstError, match="full"):
        rooms.submit(first, True)
    rooms.close_room(first)
    rooms.open_room(TWO_COINS)


@pytest.mark.parametrize("code", HOSTILE)
def test_hostile_codes_are_refused_without_repeating_them(code: object) -> None:
    rooms = PollRooms()
    rooms.open_room(TWO_COINS)
    for call in (parse_room_code, rooms.snapshot, lambda c: rooms.submit(c, True)):
        with pytest.raises(AccFirstError) as caught:
            call(code)
        if isinstance(code, str) and code.strip():
            assert code.strip() not in str(caught.value)
            assert code.strip().upper() not in str(caught.value)


def test_unknown_code_and_bad_answers() -> None:
    rooms = PollRooms()
    code = rooms.open_room(TWO_COINS)
    unknown = next(c * CODE_LENGTH for c in CODE_ALPHABET if c * CODE_LENGTH != code)
    with pytest.raises(AccFirstError, match="No poll is open"):
        rooms.submit(unknown, True)
    for answer in (1, "yes", None):
        with pytest.raises(AccFirstError, match="True"):
            rooms.submit(code, answer)


def test_protocols_students_cannot_play_are_refused() -> None:
    with pytest.raises(AccFirstError, match="1/6"):
        PollRooms().open_room(RandomizedResponse(0.7, 0.5))


def test_concurrent_answers_are_all_counted() -> None:
    rooms = PollRooms(max_answers=10_000)
    code = rooms.open_room(TWO_COINS)

    def answer(k: int) -> None:
        for i in range(500):
            rooms.submit(code, (i + k) % 2 == 0)

    threads = [threading.Thread(target=answer, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    shown = rooms.snapshot(code)
    assert (shown.yes, shown.answers) == (2000, 4000)
