"""The one table: rows of cells with a header, shown as aligned text in the terminal or
as HTML in the report (views/report/html.py), names left-aligned and numbers right-aligned."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...] | None
    rows: list[tuple]
    align: str = ""  # per column, "l" or "r"; columns beyond it: "r" (numbers)
    rule: bool = False  # a line of dashes under the header (text)
    title: str | None = None  # a line above (text)
    footer: str | None = None  # a line below (text)

    def aligned(self, column: int) -> str:
        return self.align[column] if column < len(self.align) else "r"

    def text(self) -> str:
        rows = ([self.header] if self.header else []) + [tuple(map(str, r)) for r in self.rows]
        columns = max(len(r) for r in rows)
        widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(columns)]
        lines = ["  ".join(c.ljust(w) if self.aligned(i) == "l" else c.rjust(w)
                           for i, (c, w) in enumerate(zip(r, widths))).rstrip() for r in rows]
        if self.rule and self.header:
            lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(([self.title] if self.title else []) + lines
                         + ([self.footer] if self.footer else []))
