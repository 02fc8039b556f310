"""HTML building blocks: escaping, tables, sections, the page shell with its inline styles."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1100px;
padding:0 1.2em 3em;color:#1d2330;background:#fff;line-height:1.4}
h1{font-size:1.6em;margin-top:1em}h2{border-bottom:2px solid #d0d7e2;padding-bottom:.2em;
margin-top:2em}h3{margin-top:1.4em}
table{border-collapse:collapse;margin:.6em 0;font-size:.88em}
td,th{border:1px solid #d0d7e2;padding:.2em .55em;text-align:left;vertical-align:top}
th{background:#f2f5f9}td.n{text-align:right;font-variant-numeric:tabular-nums}
.missing{color:#7a8394;font-style:italic}.warn{background:#fff4d6;border-left:4px solid #e0a800;
padding:.4em .8em;margin:.3em 0}figure{margin:.8em 0}figcaption{font-size:.85em;color:#4a5468}
svg{max-width:100%;height:auto}nav a{margin-right:1em}code{font-size:.9em}
details{margin:.4em 0}summary{cursor:pointer;font-weight:600}
"""


def esc(value: object) -> str:
    return escape(str(value), quote=True)


def cell(value: object, key: str | None = None) -> str:
    """A table cell; numbers right-aligned; ``key`` names the summary.json field it shows."""
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    attrs = ' class="n"' if numeric else ""
    if key is not None:
        attrs += f' data-key="{esc(key)}"'
    text = "&ndash;" if value is None else esc(value)
    return f"<td{attrs}>{text}</td>"


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(c if isinstance(c, str) and c.startswith("<td") else cell(c) for c in r)
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def missing(what: str) -> str:
    return f'<p class="missing">{esc(what)}: not in this run.</p>'


def figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{esc(caption)}</figcaption></figure>"


def section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{esc(anchor)}"><h2>{esc(title)}</h2>{body}</section>'


def page(title: str, sections: Sequence[tuple[str, str, str]]) -> str:
    """The whole document: ``sections`` are (anchor, title, body HTML)."""
    nav = "".join(f'<a href="#{esc(a)}">{esc(t)}</a>' for a, t, _ in sections)
    body = "".join(section(a, t, b) for a, t, b in sections)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>"
        f"<body><h1>{esc(title)}</h1><nav>{nav}</nav>{body}</body></html>\n"
    )
