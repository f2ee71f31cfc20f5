"""Every setting stays put, in a real browser: a sweep of every widget on every page, and hostile links.

The sweep opens each page with small settings, then moves each of its sliders, number
boxes, radios, select boxes, button groups and toggles once by keyboard and once by
mouse (the click goes back towards the value before; a blank number box is emptied
again), as a visitor would. After each move
it reads every widget on the screen and the URL: no *other* widget may have changed its
value, at most one query parameter (the moved setting's) may have changed, and no
exception may show. Widgets that appear or disappear with a move (a section that needs
other data, a page that stops on a contradiction) are compared while both are on screen.
The shared sidebar (dataset, λ, radius) is the same code on every page; it is swept on
the explorer. The docs pages have no setting of their own. The issue's own round trip —
α → → ← ← at the explorer's defaults — must leave every setting and every number as a
fresh load shows them.

The hostile links open every page with every query parameter set to a value a link must
not be able to use (Markdown, HTML, LaTeX, NaN, ±∞, huge, negative, empty, Unicode
digits), spread so that each kind reaches every page with settings of its own (a page
with few gets more loads) and every shared parameter: the page shows no exception, no
Markdown, HTML or formula from the link, and one notice (collapsible, above the title)
naming every parameter it ignored; any other value is in the URL as given (taken, or not
read yet because the page stopped on another one and says why).
"""

from __future__ import annotations

import math
import urllib.parse

import pytest

from tests.app.browsing import (
    ALPHA_SLIDER,
    METRIC,
    TITLE,
    assert_no_exception,
    headline,
    link_notices,
    new_page,
    query,
    read_link_notice,
    runs_done,
    wait_settled,
)
from ui.dataset import DATASET, LAMBDA, RADIUS
from ui.errors import GENERIC_MESSAGE

pytestmark = pytest.mark.browser

# Each page with settings that keep its reruns short.
SWEPT = {
    "": "ds=diabetes&target=alpha&trials=2&T=100",
    "sweep": "ds=diabetes&trials=1&T=100&alphas=0.05,0.1&methods=nr",
    "budget": "ds=diabetes&queue=nr-laplace-0.1,counts-nr-0.1",
    "counts": "ds=diabetes",
    "learn_randomized_response": "ds=diabetes",
    "learn_laplace": "ds=diabetes",
    "learn_composition": "ds=diabetes",
    "learn_gibbs": "ds=diabetes",
}
SHARED_LABELS = {setting.label for setting in (DATASET, LAMBDA, RADIUS)}

# Every widget on the screen: [name (kind and label, made unique), kind, position among its kind, value, movable, label,
# in the sidebar].
WIDGETS = """() => {
  const text = el => (el ? el.innerText.replace(/\\u2060/g, '').trim() : '');
  const label = el => text(el.querySelector('[data-testid="stWidgetLabel"]'))
    || el.querySelector('[aria-label]')?.getAttribute('aria-label') || '';
  const read = {
    stSlider: el => [...el.querySelectorAll('input[type=range]')].map(i => i.getAttribute('aria-valuetext')).join(' | '),
    stNumberInput: el => el.querySelector('input').value,
    stTextInput: el => el.querySelector('input').value,
    stRadio: el => text(el.querySelector('input:checked')?.closest('label').querySelector('[data-testid="stMarkdownContainer"]')),
    stSelectbox: el => el.querySelector('input').value,
    stButtonGroup: el => [...el.querySelectorAll('button[aria-checked="true"], button[aria-pressed="true"]')]
      .map(text).join(' | '),
    stCheckbox: el => String(el.querySelector('input').checked),
  };
  const found = [], names = new Set();
  for (const [kind, value] of Object.entries(read)) {
    document.querySelectorAll(`[data-testid="${kind}"]`).forEach((el, index) => {
      let name = `${kind}: ${label(el)}`;
      while (names.has(name)) name += ' (again)';
      names.add(name);
      const disabled = el.querySelector('input:disabled, [aria-disabled="true"]') !== null;
      // A widget drawn hidden (the Data sidebar on a page that does not run on data) is not one a person can move.
      const visible = el.getClientRects().length > 0;
      const movable = kind !== 'stTextInput' && !disabled && visible && el.closest('[data-testid="stForm"]') === null;
      const side = el.closest('[data-testid="stSidebar"]') !== null;
      found.push([name, kind, index, value(el), movable, label(el), side]);
    });
  }
  return found;
}"""
THUMB = """input => {
  const thumb = input.closest('[style*="translate"]').getBoundingClientRect();
  const track = input.closest('[style*="translate"]').parentElement.getBoundingClientRect();
  return {x: thumb.x + thumb.width / 2, y: thumb.y + thumb.height / 2, left: track.x, right: track.x + track.width};
}"""


def widgets(page) -> dict[str, tuple[str, int, str, bool, str, bool]]:
    """Each widget on the screen by name: its kind, position among its kind, value, whether a visitor can move it,
    label, and whether it is in the sidebar."""
    return {name: tuple(widget) for name, *widget in page.evaluate(WIDGETS)}


def values(page) -> dict[str, str]:
    return {name: widget[2] for name, widget in widgets(page).items()}


def _slider(page, element, how: str, before: dict) -> None:
    handle = element.locator('input[type="range"]').first
    element.scroll_into_view_if_needed()
    if how == "keyboard":
        before["thumb"] = handle.evaluate(THUMB)
        at_top = float(handle.get_attribute("value")) >= float(handle.get_attribute("max"))
        handle.focus()
        handle.press("ArrowLeft" if at_top else "ArrowRight")
        return
    thumb, now = before["thumb"], handle.evaluate(THUMB)
    x = thumb["x"]
    if abs(now["x"] - x) < 10:  # a fine slider: one key step is a pixel or two; click well beside the thumb
        x = x - 30 if x - 30 > thumb["left"] else x + 30
    page.mouse.click(x, now["y"])


def _number(page, element, how: str, before: dict) -> None:
    field = element.locator("input")
    element.scroll_into_view_if_needed()
    if how == "keyboard":
        field.focus()
        if field.input_value() == "":  # blank = automatic: type a number
            page.keyboard.type("1")
            page.keyboard.press("Enter")
            before["key"] = "typed"
            return
        top = field.get_attribute("max")
        at_top = top is not None and float(field.input_value()) >= float(top)
        before["key"] = "ArrowDown" if at_top else "ArrowUp"
        field.press(before["key"])
        return
    if how == "clear":  # back to blank (automatic), as a visitor empties the box
        field.focus()
        page.keyboard.press("ControlOrMeta+A")
        page.keyboard.press("Backspace")
        page.keyboard.press("Enter")
        return
    button = "stNumberInputStepUp" if before["key"] == "ArrowDown" else "stNumberInputStepDown"
    element.get_by_test_id(button).click()


def _radio(page, element, how: str, before: dict) -> None:
    element.scroll_into_view_if_needed()
    if how == "keyboard":
        checked = element.locator("input:checked")
        (checked if checked.count() else element.locator("input").first).focus()
        page.keyboard.press("ArrowDown")
        return
    element.get_by_test_id("stRadioOption").filter(has=page.get_by_text(before["value"], exact=True)).click()


def _selectbox(page, element, how: str, before: dict) -> None:
    field = element.locator("input")
    if how == "keyboard":
        field.focus()
        field.press("ArrowDown")
        page.locator('[role="option"][data-focused]').wait_for()
        field.press("Enter")
        return
    field.click()
    page.get_by_role("option", name=before["value"], exact=True).click()


def _button_group(page, element, how: str, before: dict) -> None:
    options = element.locator("button[data-variant]")
    single = element.locator('button[role="radio"]').count() > 0
    element.scroll_into_view_if_needed()
    if how == "keyboard":
        if single:
            checked = element.locator('button[aria-checked="true"]')
            last = checked.evaluate("b => b.nextElementSibling === null")
            checked.focus()
            page.keyboard.press("ArrowLeft" if last else "ArrowRight")
        else:
            options.first.focus()
        page.keyboard.press("Space")
        return
    if single:
        options.filter(has=page.get_by_text(before["value"], exact=True)).click()
    else:
        options.first.click()


def _checkbox(page, element, how: str, before: dict) -> None:
    element.scroll_into_view_if_needed()
    if how == "keyboard":
        element.locator("input").focus()
        page.keyboard.press("Space")
    else:
        element.locator("label").first.click()


MOVE = {
    "stSlider": _slider,
    "stNumberInput": _number,
    "stRadio": _radio,
    "stSelectbox": _selectbox,
    "stButtonGroup": _button_group,
    "stCheckbox": _checkbox,
}


def changed(before: dict, after: dict, *, skip: str = "") -> dict:
    """Entries present in both with different values (``skip`` left out)."""
    return {k: (before[k], after[k]) for k in before.keys() & after.keys() if k != skip and before[k] != after[k]}


def move(page, name: str, how: str, memory: dict) -> tuple[dict, dict]:
    """Move the widget ``name`` once (``how``: "keyboard", "click" or "clear"); the others' and the query's changes."""
    kind, index, value, *_ = widgets(page)[name]
    memory.setdefault("value", value)
    before_values, before_query, runs = values(page), query(page), runs_done(page)
    MOVE[kind](page, page.locator(f'[data-testid="{kind}"]').nth(index), how, memory)
    page.wait_for_function(
        f"([name, value]) => ({WIDGETS})().some(w => w[0] === name && w[3] !== value)", arg=[name, value]
    )
    wait_settled(page, since=runs)
    after_values, after_query = values(page), query(page)
    moved_query = {k for k in before_query.keys() | after_query.keys() if before_query.get(k) != after_query.get(k)}
    return changed(before_values, after_values, skip=name), moved_query


# The explorer has the most settings: its sidebar and its main area are swept by two tests, which can run side by side.
SWEEPS = [("", "sidebar"), ("", "main"), *((path, "page") for path in SWEPT if path)]


@pytest.mark.browser(long=True)
@pytest.mark.parametrize(("path", "part"), SWEEPS, ids=lambda value: value or "explorer")
def test_moving_one_setting_leaves_every_other_one_alone(server, browser, path, part):
    page = new_page(browser)
    page.goto(f"{server}/{path}?{SWEPT[path]}")
    wait_settled(page, TITLE)
    assert_no_exception(page)
    problems, unreached = [], []
    parameters: dict[str, set[str]] = {}
    for name, (kind, _, value, movable, label, side) in widgets(page).items():
        if not movable or (path and label in SHARED_LABELS) or part == ("main" if side else "sidebar"):
            continue
        memory: dict = {}
        # A blank (automatic) number box is emptied again at the end: two typed ε bounds would contradict.
        for how in ("keyboard", "click", *(("clear",) if kind == "stNumberInput" and value == "" else ())):
            if name not in widgets(page):  # hidden by an earlier move (each click goes back, so it should not be)
                unreached.append(f"{how} on {name!r}")
                continue
            others, moved_query = move(page, name, how, memory)
            if others:
                problems.append(f"{how} on {name!r} changed {others}")
            if len(moved_query) > 1:
                problems.append(f"{how} on {name!r} changed the URL's {sorted(moved_query)}")
            parameters.setdefault(name, set()).update(moved_query)
            if how == "clear" and widgets(page)[name][2] != "":
                problems.append(f"emptying {name!r} left {widgets(page)[name][2]!r}, not blank (automatic)")
            if page.locator('[data-testid="stException"]').count():
                problems.append(f"{how} on {name!r} raised an exception")
    assert not problems, "\n".join(problems)
    assert not unreached, unreached
    assert all(len(keys) <= 1 for keys in parameters.values()), parameters
    page.close()


def test_the_alpha_round_trip_leaves_every_setting_and_number_as_a_fresh_load_shows_them(server, browser):
    """The explorer at its defaults with the paper's α; α → → ← ← by keyboard, as fast as a visitor presses."""
    page = new_page(browser)
    page.goto(f"{server}/?target=alpha")
    wait_settled(page, METRIC)
    before, before_query, numbers, runs = values(page), query(page), headline(page), runs_done(page)
    slider = page.locator(ALPHA_SLIDER)
    slider.focus()
    for key in ("ArrowRight", "ArrowRight", "ArrowLeft", "ArrowLeft"):
        slider.press(key)
    wait_settled(page, METRIC, since=runs)
    assert changed(before, values(page)) == {} and query(page) == before_query
    assert headline(page) == numbers
    assert_no_exception(page)
    page.close()


MARKER = "Zq9"  # in every hostile piece of markup: found in a rendered element, it came from the link
HOSTILE = (
    f"**bold{MARKER}** <b>tag{MARKER}</b> [link{MARKER}](https://evil.example) ![{MARKER}](http://evil.example/i.png)",
    f"$\\frac{{{MARKER}}}{{0}}$ $$\\sum {MARKER}$$",
    "NaN",
    "inf",
    "-inf",
    "1e308",
    "-1",
    "",
    "٣",  # an Arabic-Indic digit: Python's int() reads it as 3, a number box cannot be typed so
)
MARKUP = f"""() => [...document.querySelectorAll('strong, b, em, a[href], img, .katex, code')]
  .filter(e => /{MARKER}|evil/.test(e.textContent + (e.getAttribute('href') || '') + (e.getAttribute('src') || '')))
  .map(e => e.outerHTML.slice(0, 200))"""
SHARED_KEYS = (DATASET.key, LAMBDA.key, RADIUS.key)
# Parameters a page reads that its URL omits at their defaults ("automatic", no room).
OPTIONAL = {"": ("eps_min", "eps_max"), "learn_randomized_response": ("room",)}
DOCS = ["glossary", "docs_charts", "docs_mathematics", "docs_data"]  # only the shared sidebar's settings
PAGES = [*SWEPT, *DOCS]


def hostile_link(own: list[str], page: int, load: int) -> dict[str, str]:
    """Every parameter of page number ``page`` set to a hostile value, for its ``load``-th hostile load.

    The page's own parameters take the kinds in turn (a page with fewer parameters than kinds gets
    more loads, so each kind reaches it); each shared parameter takes the kind its page number
    gives, so that over the pages it meets every kind.
    """
    link = {key: HOSTILE[(page + number + load) % len(HOSTILE)] for number, key in enumerate(SHARED_KEYS)}
    link.update({key: HOSTILE[(position + load * len(own)) % len(HOSTILE)] for position, key in enumerate(own)})
    return link


def accepted(given: str, now: list[str] | None) -> bool:
    """Whether the page kept the link's value ``given`` (``now``: the parameter's values after the load)."""
    if now is None:
        return given == ""  # blank: the automatic value, which the URL omits
    if now == [given]:
        return True
    try:
        return math.isclose(float(now[-1]), float(given)) and given.isascii()
    except ValueError:
        return False


@pytest.mark.parametrize("path", PAGES, ids=lambda path: path or "explorer")
def test_a_hostile_link_shows_one_notice_and_nothing_from_the_link_as_markup(server, browser, path):
    page = new_page(browser)
    page.goto(f"{server}/{path}")
    wait_settled(page, TITLE)
    own = sorted({*query(page), *OPTIONAL.get(path, ())} - set(SHARED_KEYS))
    for load in range(math.ceil(len(HOSTILE) / len(own)) if own else 1):
        link = hostile_link(own, PAGES.index(path), load)
        page.goto(f"{server}/{path}?{urllib.parse.urlencode(link, quote_via=urllib.parse.quote)}")
        wait_settled(page, TITLE)
        assert_no_exception(page)
        assert GENERIC_MESSAGE not in page.locator("body").inner_text()
        assert page.evaluate(MARKUP) == [], f"{link}: markup from the link was rendered"
        notice = link_notices(page)
        assert notice.count() == 1, f"{link}: {notice.count()} notices"
        assert notice.bounding_box()["y"] < page.locator(TITLE).bounding_box()["y"], "the notice is not at the top"
        text = read_link_notice(page)
        assert page.evaluate(MARKUP) == [], f"{link}: markup from the link was rendered in the notice"
        after = query(page)
        named = {line.split(" ", 1)[0].rstrip(",:") for line in text.splitlines()}
        for key, given in link.items():
            # Kept in the URL as given: taken, or not read yet (the page stopped earlier, saying why).
            assert key in named or accepted(given, after.get(key)), (key, given, after.get(key))
            if key in named and given == HOSTILE[0]:
                assert f"**bold{MARKER}**" in text  # the link's Markdown is shown as it was typed
    page.close()
