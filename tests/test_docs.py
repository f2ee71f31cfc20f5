"""The repository's docs: every link the package and the docs make lands on a heading that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from accfirst.docs import DOCS_PAGES, DOCS_URL, docs_link
from accfirst.errors import AccFirstError

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def github_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to hyphens."""
    anchors: set[str] = set()
    in_code = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        heading = re.match(r"#{1,6} (.+)", line)
        if heading and not in_code:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
            anchor, suffix = slug, 1
            while anchor in anchors:
                anchor, suffix = f"{slug}-{suffix}", suffix + 1
            anchors.add(anchor)
    return anchors


ANCHORS = {name: github_anchors((DOCS / name).read_text(encoding="utf-8")) for name in DOCS_PAGES.values()}


def test_every_docs_page_exists():
    assert set(DOCS_PAGES.values()) <= {path.name for path in DOCS.glob("*.md")}


def test_links_from_the_package_land_on_headings():
    pattern = re.compile(r"docs_link\(\s*[\"'](\w+)[\"']\s*(?:,\s*[\"']([\w-]+)[\"'])?")
    found = 0
    for path in (ROOT / "accfirst").rglob("*.py"):
        for page, section in pattern.findall(path.read_text(encoding="utf-8")):
            if path.name == "docs.py":
                continue
            found += 1
            assert page in DOCS_PAGES, (path, page)
            assert not section or section in ANCHORS[DOCS_PAGES[page]], (path, page, section)
    assert found >= 3


@pytest.mark.parametrize("name", sorted(DOCS_PAGES.values()))
def test_links_between_docs_pages_resolve(name):
    text = (DOCS / name).read_text(encoding="utf-8")
    for target, anchor in re.findall(r"\]\(([\w.-]*\.md)?(?:#([\w-]+))?\)", text):
        page = target or name
        assert (DOCS / page).exists(), (name, target)
        assert not anchor or anchor in ANCHORS[page], (name, target, anchor)


@pytest.mark.parametrize("name", sorted(DOCS_PAGES.values()))
def test_docs_stand_on_their_own(name):
    """They speak in the project's words and point at nothing outside the repository."""
    text = (DOCS / name).read_text(encoding="utf-8")
    assert "SPEC" not in text and "shared/" not in text and "/work/" not in text


def test_docs_link():
    assert docs_link("data") == f"{DOCS_URL}/data-preparation.md"
    assert docs_link("mathematics", "calibrations") == f"{DOCS_URL}/mathematics.md#calibrations"
    with pytest.raises(AccFirstError, match="unknown docs page 'spec'"):
        docs_link("spec")
