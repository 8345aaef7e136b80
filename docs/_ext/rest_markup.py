"""A griffe extension for the API reference: the docstrings' reST markup as Markdown.

The docstrings use Sphinx roles (``:class:`~goboom_env.config.GameConfig```), double-backquote literals and reST
simple tables (rows between ``===  ===`` rules), which mkdocstrings would show as written. Before the docstrings are
parsed, each role becomes inline code of its target (the last component after a ``~``, as Sphinx shows it), each
literal single-backquoted code, and each simple table a Markdown table.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const|ref):`(~?)([^`<]+?)(?:\s*<[^>]+>)?`")
LITERAL = re.compile(r"``(.+?)``")


RULE = re.compile(r"^=+( +=+)+ *$")


def to_markdown(text: str) -> str:
    """``text`` with its reST roles and literals as Markdown inline code and its simple tables as Markdown."""
    text = "\n".join(_tables(text.split("\n")))  # first: the columns are where the rules' spans put them
    text = ROLE.sub(lambda m: f"`{m.group(2).rsplit('.', 1)[-1] if m.group(1) else m.group(2)}`", text)
    return LITERAL.sub(lambda m: f"`{m.group(1)}`", text)


def _tables(lines: list[str]) -> list[str]:
    """The lines with each simple table (rule, header, rule, rows, rule) as a Markdown table."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        end = i + 2
        if RULE.match(lines[i]) and end < len(lines) and RULE.match(lines[end]):
            spans = [m.span() for m in re.finditer(r"=+", lines[i])]
            rows = [lines[i + 1]]
            end += 1
            while end < len(lines) and not RULE.match(lines[end]):
                rows.append(lines[end])
                end += 1
            cells: list[list[str]] = []
            for row in rows:
                row_cells = _cells(row, [a for a, _ in spans[1:]])
                if cells and not row_cells[0]:  # a continuation line: its text joins the row above
                    cells[-1] = [f"{old} {new}".strip() for old, new in zip(cells[-1], row_cells)]
                else:
                    cells.append(row_cells)
            out += ["", "| " + " | ".join(cells[0]) + " |", "|" + "---|" * len(spans)]
            out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells[1:]] + [""]
            i = end + 1
            continue
        out.append(lines[i])
        i += 1
    return out


class RestMarkup(griffe.Extension):
    """Rewrites every loaded object's docstring with :func:`to_markdown`."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = to_markdown(obj.docstring.value)


def _cells(row: str, starts: list[int]) -> list[str]:
    """A table row cut at the columns' ``starts``; a cell that runs into the gap (a long first column) moves the
    cut to the next space."""
    out, begin = [], 0
    for start in starts:
        cut = max(start, begin)
        while 0 < cut < len(row) and row[cut - 1] != " ":
            cut += 1
        out.append(row[begin:cut].strip())
        begin = cut
    return [*out, row[begin:].strip()]

