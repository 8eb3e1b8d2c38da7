"""Renders a Markdown export with markdown-it-py (CommonMark with GFM
tables, an implementation independent of quire) and prints what a reader
sees: each heading, and each table's body cells as text (`<br>` as a line
break), as JSON.

Usage: cells.py FILE.md
"""

import html
import json
import re
import sys

from markdown_it import MarkdownIt


def text(inline_html):
    with_breaks = re.sub(r"<br\s*/?>", "\n", inline_html)
    return html.unescape(re.sub(r"<[^>]+>", "", with_breaks))


def main(path):
    md = MarkdownIt("commonmark").enable("table")
    rendered = md.render(open(path, encoding="utf-8").read())
    headings = [text(h) for h in re.findall(r"<h[12]>(.*?)</h[12]>", rendered, re.S)]
    tables = []
    for body in re.findall(r"<tbody>(.*?)</tbody>", rendered, re.S):
        rows = []
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S):
            rows.append([text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)])
        tables.append(rows)
    emphasis = re.findall(r"<em>(.*?)</em>", rendered)
    print(json.dumps({"headings": headings, "tables": tables, "emphasis": emphasis}, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1])
