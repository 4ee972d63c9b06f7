"""HTML building blocks in which every piece of text is escaped unless it is already markup.

`Html` marks a string as markup the report itself built; anything else put
into an element (command lines, hostnames, parameters, messages, numbers) is
passed through html.escape. Building pages only from these functions keeps
escaping from depending on remembering it at each call.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from typing import Iterable

from ..tables import Table


class Html(str):
    """Markup built by the report: inserted as it is."""


def esc(value) -> Html:
    return value if isinstance(value, Html) else Html(html.escape(str(value), quote=True))


def join(parts: Iterable) -> Html:
    return Html("".join(esc(p) for p in parts))


def el(tag: str, *children, **attrs) -> Html:
    """<tag attrs>children</tag>; attribute names use _ for - and a trailing _ for keywords."""
    attr_text = "".join(f' {name.rstrip("_").replace("_", "-")}="{esc(value)}"'
                        for name, value in attrs.items() if value is not None)
    return Html(f"<{tag}{attr_text}>{join(children)}</{tag}>")


def table(t: Table) -> Html:
    """The table as HTML: its right-aligned columns are numbers (class num)."""
    def row(cells, cell_tag):
        return el("tr", *(el(cell_tag, c, class_="num" if t.aligned(i) == "r" else None)
                          for i, c in enumerate(cells)))
    head = "" if t.header is None else el("thead", row(t.header, "th"))
    return el("table", head, el("tbody", *(row(r, "td") for r in t.rows)))


def png_img(png: bytes, alt: str, title: str | None = None) -> Html:
    """The figure embedded as a data URI: the report opens without any network or other file;
    `title`: shown when the pointer rests on it."""
    data = base64.b64encode(png).decode("ascii")
    hover = "" if title is None else f' title="{esc(title)}"'
    return Html(f'<img src="data:image/png;base64,{data}" alt="{esc(alt)}"{hover}>')


def figure(png: bytes, alt: str, caption, title: str | None = None) -> Html:
    return el("figure", png_img(png, alt, title), el("figcaption", caption))


@dataclass(frozen=True)
class Section:
    """One part of the report: its anchor, heading and markup."""
    anchor: str
    title: str
    body: Html

    # A kernel's group holds its sections (Section.within); theirs are one level down.
    parts: tuple["Section", ...] = ()

    def html(self, level: int = 2) -> Html:
        return el("section", el(f"h{level}", self.title), self.body,
                  *(p.html(level + 1) for p in self.parts), id=self.anchor)

    def within(self, group: str) -> "Section":
        """This section inside a group: its anchor made unique to the group."""
        return Section(f"{group}-{self.anchor}", self.title, self.body, self.parts)


def section(anchor: str, title: str, *body) -> Section:
    return Section(anchor, title, join(body))


def contents(sections: Iterable[Section]) -> Html:
    return el("nav", _entries(sections))


def _entries(sections: Iterable[Section]) -> Html:
    return el("ul", *(el("li", el("a", s.title, href=f"#{s.anchor}"),
                         *([_entries(s.parts)] if s.parts else []))
                      for s in sections))


FINDINGS_BORDER = "#22aa77"  # the findings box's frame: the first screen's tests look for it

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222;
       padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
h3 { margin-top: 1.5em; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; }
figcaption { font-size: 0.9em; color: #444; max-width: 60em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.num, th.num { text-align: right; } td.num { white-space: nowrap; }
code, pre { font: 0.9em ui-monospace, monospace; } pre { white-space: pre-wrap; margin: 0; }
.note { color: #8a4b00; } nav ul { columns: 2; }
#findings { background: #f5fbf7; padding: 0 1em 0.3em; }
#findings h2 { margin-top: 0.4em; border: none; } #findings table { background: #fff; }
p.caption { font-size: 0.85em; color: #444; }
""" + f"#findings {{ border: 2px solid {FINDINGS_BORDER}; }}\n"


def page(title: str, body: Iterable) -> str:
    """The whole document: inline CSS, no script, no external resource."""
    head = el("head", Html('<meta charset="utf-8">'), el("title", title),
              el("style", Html(STYLE)))
    return "<!DOCTYPE html>\n" + el("html", head, el("body", el("h1", title), *body), lang="en")
