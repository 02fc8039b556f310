"""What a self-contained page must not hold: anything the browser would fetch."""

from __future__ import annotations

import re

# A resource the browser would fetch: src/href/url() pointing at a network or protocol-relative
# address, any <script> or <link> at all, an @import. (SVG's xmlns is a name, never fetched.)
FETCHES = re.compile(
    r"""(?:\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?//)|<script|<link|url\(\s*["']?\s*(?:https?:)?//|@import""",
    re.IGNORECASE,
)


def assert_self_contained(html: str) -> None:
    assert html.startswith("<!DOCTYPE html>") and html.endswith("</html>\n")
    assert FETCHES.search(html) is None
    without_xmlns = html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "http://" not in without_xmlns and "https://" not in without_xmlns
