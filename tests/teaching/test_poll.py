"""The live-poll registry: randomized answers only, one per tab, a class's pace, expiry, caps, hostile input, threads."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from accfirst import AccFirstError
from accfirst.teaching import TWO_COINS, AnswerRefused, PollRooms, RandomizedResponse, parse_room_code
from accfirst.teaching.poll import CODE_ALPHABET, CODE_LENGTH, FLOOD, FORGED, FULL, REPEAT

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

# What a room stores: nothing else (no names, no session identifiers, no answer per token).
ROOM_FIELDS = {"protocol", "key", "last_active", "allowance", "yes", "answers", "used", "refused"}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def answer(rooms: PollRooms, code: str, answer: bool):
    """One answer from a new tab."""
    return rooms.submit(code, answer, rooms.issue_token(code))


def test_answers_add_up_to_the_estimate() -> None:
    rooms = PollRooms()
    code = rooms.open_room(TWO_COINS)
    assert len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET)
    empty = rooms.snapshot(code)
    assert (empty.yes, empty.answers, empty.estimate, empty.interval, empty.misfit) == (0, 0, None, None, None)
    for given in [True] * 7 + [False] * 13:
        answer(rooms, code, given)
    shown = rooms.snapshot(f"  {code.lower()} ")
    assert (shown.yes, shown.answers, shown.misfit, shown.refused) == (7, 20, None, ())
    assert shown.estimate == pytest.approx(TWO_COINS.estimate(7 / 20))
    assert shown.interval == TWO_COINS.confidence_interval(7, 20)


def test_a_room_stores_no_link_between_a_tab_and_its_answer() -> None:
    rooms = PollRooms()
    code = rooms.open_room(RandomizedResponse(4 / 6, 0.5))
    token = rooms.issue_token(code)
    rooms.submit(code, True, token)
    (room,) = rooms._rooms.values()
    assert {f.name for f in dataclasses.fields(room)} == ROOM_FIELDS
    assert (room.yes, room.answers) == (1, 1)
    # The used tokens are kept as digests in a set, apart from the counts: not the token, not its answer.
    (used,) = room.used
    assert isinstance(used, bytes) and len(used) == 16 and used not in token.encode()


def test_a_second_answer_from_the_same_tab_is_refused_and_counted() -> None:
    rooms = PollRooms()
    code = rooms.open_room(TWO_COINS)
    token = rooms.issue_token(code)
    assert rooms.valid_token(code, token) and not rooms.has_answered(code, token)
    rooms.submit(code, True, token)
    assert rooms.has_answered(code, token)  # a reload of the tab shows that it has answered
    for given in (True, False):
        with pytest.raises(AnswerRefused, match="answered this poll already") as refused:
            rooms.submit(code, given, token)
        assert refused.value.reason == REPEAT
    answer(rooms, code, False)  # another tab may answer
    shown = rooms.snapshot(code)
    assert (shown.yes, shown.answers, shown.refused) == (1, 2, ((REPEAT, 2),))


def test_tokens_the_room_did_not_issue_are_refused() -> None:
    rooms = PollRooms()
    code, other = rooms.open_room(TWO_COINS), rooms.open_room(TWO_COINS)
    token = rooms.issue_token(code)
    changed = token[:10] + ("A" if token[10] != "A" else "B") + token[11:]
    for forged in ["", "x" * len(token), changed, rooms.issue_token(other), token + "A", None, 123, "é" * len(token)]:
        assert not rooms.valid_token(code, forged)
        with pytest.raises(AnswerRefused, match="not from this poll") as refused:
            rooms.submit(code, True, forged)
        assert refused.value.reason == FORGED
    assert rooms.snapshot(code).answers == 0 and rooms.snapshot(code).refused == ((FORGED, 8),)


def test_rooms_expire_after_inactivity() -> None:
    clock = Clock()
    rooms = PollRooms(idle_seconds=100, clock=clock)
    code = rooms.open_room(TWO_COINS)
    clock.now = 90
    answer(rooms, code, False)  # activity keeps it open
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
        answer(rooms, first, True)
    with pytest.raises(AnswerRefused, match="full"):
        answer(rooms, first, True)
    assert rooms.snapshot(first).refused == ((FULL, 1),)
    rooms.close_room(first)
    rooms.open_room(TWO_COINS)


@pytest.mark.parametrize("code", HOSTILE)
def test_hostile_codes_are_refused_without_repeating_them(code: object) -> None:
    rooms = PollRooms()
    token = rooms.issue_token(rooms.open_room(TWO_COINS))
    for call in (parse_room_code, rooms.snapshot, rooms.issue_token, lambda c: rooms.submit(c, True, token)):
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
        rooms.issue_token(unknown)
    token = rooms.issue_token(code)
    for given in (1, "yes", None):
        with pytest.raises(AccFirstError, match="True"):
            rooms.submit(code, given, token)


def test_protocols_students_cannot_play_are_refused() -> None:
    with pytest.raises(AccFirstError, match="1/6"):
        PollRooms().open_room(RandomizedResponse(0.7, 0.5))


def test_concurrent_answers_are_all_counted() -> None:
    rooms = PollRooms(max_answers=10_000, burst=10_000)
    code = rooms.open_room(TWO_COINS)
    tokens = [[rooms.issue_token(code) for _ in range(500)] for _ in range(8)]

    def send(k: int) -> None:
        for i, token in enumerate(tokens[k]):
            rooms.submit(code, (i + k) % 2 == 0, token)

    threads = [threading.Thread(target=send, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    shown = rooms.snapshot(code)
    assert (shown.yes, shown.answers) == (2000, 4000)


@pytest.mark.parametrize("pattern", ["together", "over a minute", "late rush"])
def test_a_class_of_300_answering_within_a_minute_is_never_slowed(pattern: str) -> None:
    clock = Clock()
    rooms = PollRooms(clock=clock)
    code = rooms.open_room(TWO_COINS)
    times = {"together": [5.0] * 300, "over a minute": [i / 5 for i in range(300)], "late rush": [59.0] * 300}[pattern]
    for moment in times:
        clock.now = moment
        answer(rooms, code, True)
    assert rooms.snapshot(code).answers == 300 and rooms.snapshot(code).refused == ()


def test_a_scripted_flood_is_held_to_a_class_pace_and_shown_to_the_teacher() -> None:
    clock = Clock()
    rooms = PollRooms(clock=clock)
    code = rooms.open_room(TWO_COINS)
    refused = 0
    for attempt in range(6000):  # 100 answers a second for a minute
        clock.now = attempt / 100
        try:
            answer(rooms, code, True)
        except AnswerRefused as error:
            assert error.reason == FLOOD
            refused += 1
    shown = rooms.snapshot(code)
    # At most the burst plus 5 a second: 300 + 5 × 60.
    assert shown.answers <= 300 + 5 * 60 + 1 and shown.answers + refused == 6000
    assert shown.refused == ((FLOOD, refused),)
    clock.now += 10  # the pace comes back after a pause
    answer(rooms, code, False)


def test_answers_that_do_not_fit_the_coins_are_flagged_with_no_point_interval() -> None:
    rooms = PollRooms()
    many, few = rooms.open_room(TWO_COINS), rooms.open_room(TWO_COINS)
    for _ in range(20):
        answer(rooms, many, True)
    for _ in range(33):
        answer(rooms, few, False)
    shown = rooms.snapshot(many)
    assert shown.estimate == pytest.approx(1.5) and shown.clipped_estimate == 1.0 and shown.interval is None
    assert shown.misfit.direction == "more" and shown.misfit.probability == pytest.approx(0.75**20)
    shown = rooms.snapshot(few)
    assert shown.estimate == pytest.approx(-0.5) and shown.clipped_estimate == 0.0 and shown.interval is None
    assert shown.misfit.direction == "fewer" and shown.misfit.probability == pytest.approx(0.75**33)


def test_a_browser_gets_the_same_token_in_a_room_however_it_comes_back():
    """One answer per browser: the token is derived from the browser's identifier with the room's key."""
    rooms = PollRooms()
    code, other = rooms.open_room(TWO_COINS), rooms.open_room(TWO_COINS)
    browser = "k3Jd9_abcdefghijklmnopq"
    token = rooms.browser_token(code, browser)
    assert rooms.browser_token(code, browser) == token and rooms.valid_token(code, token)
    assert rooms.browser_token(code, browser + "x") != token
    assert rooms.browser_token(other, browser) != token  # two rooms cannot link a browser
    rooms.submit(code, True, token)
    with pytest.raises(AnswerRefused, match="answered this poll already"):
        rooms.submit(code, False, rooms.browser_token(code, browser))
    for hostile in ("", "short", "x" * 65, "spaces are not ok here", "é" * 20, None):
        with pytest.raises(AccFirstError, match="browser identifier"):
            rooms.browser_token(code, hostile)
