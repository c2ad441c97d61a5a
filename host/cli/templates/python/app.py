"""{{name}}: an ochre tool plugin in Python.

A tool is one function marked with ochre_sdk.tool: its docstring is the
description the agent reads, `schema` the JSON Schema of its arguments (the
host checks them before the function runs). Return text, JSON (a dict or a
list) or an ochre_sdk.Output; raise ochre_sdk.ToolError for a clean failure.
"""

import ochre_sdk
from ochre_sdk import ToolError, browser, log

SCHEMA = {
    "type": "object",
    "properties": {
        "max_level": {
            "type": "integer",
            "minimum": 1,
            "maximum": 6,
            "description": "The deepest heading level to list: 1 lists only h1, 6 lists h1 to h6 (default 3).",
        }
    },
    "additionalProperties": False,
}


@ochre_sdk.tool("{{tool}}", SCHEMA, read_only=True, scope="browser")
def headings(args):
    """List the headings (h1, h2, ...) of the current page, one per line, indented by
    level. Use it to see a page's outline before reading it all."""
    level = args.get("max_level", 3)
    if not 1 <= level <= 6:
        raise ToolError.invalid_argument("max_level", "must be 1 to 6")
    found = browser.evaluate(script(level))
    lines = outline(found)
    log.info(f"{len(lines)} headings")
    return ochre_sdk.Output("\n".join(lines) or "no headings", summary=f"{len(lines)} headings")


def script(level):
    """The page script: [[level, text], ...] of the headings down to `level`."""
    selector = ",".join(f"h{n}" for n in range(1, level + 1))
    return f"[...document.querySelectorAll('{selector}')].map(h => [Number(h.tagName[1]), h.innerText.replace(/\\s+/g, ' ').trim()])"


def outline(found):
    """One line per heading, two spaces of indent per level below 1."""
    lines = []
    for item in found if isinstance(found, list) else []:
        if isinstance(item, list) and len(item) == 2 and isinstance(item[0], int) and isinstance(item[1], str):
            lines.append("  " * (item[0] - 1) + f"h{item[0]} {item[1]}")
    return lines
