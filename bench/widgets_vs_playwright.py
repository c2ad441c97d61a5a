#!/usr/bin/env python3
"""The widget suite as an agent does it, ochre against playwright-mcp: the same
steps on the same pages (real UI libraries from npm: Choices.js, Bootstrap,
SweetAlert2, htmx, Pikaday, SortableJS; a page with a cross-site payment frame).
Each "act on X" step is a snapshot, a lookup of X by role and name in it, and
the action, as an agent without memory of the page would do it. Prints, per task
and server: whether the task reached the server (the /record request the page
sends), total response bytes, wall time, and the ratios.

Uses bench/harness.py for the servers' adapters (command lines, tool calls,
snapshot parsing). Setup:
    bash bench/setup.sh                    # venv + playwright-mcp in target/bench
    cargo build --release --bin ochre
    cargo test -p ochre-tests --test widgets   # installs the UI libraries under target/test-npm
Run:
    target/bench/venv/bin/python bench/widgets_vs_playwright.py
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shlex
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import harness as h  # noqa: E402 - bench/harness.py, beside this file
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

ROOT = h.REPO

# Steps: ("nav", page) | ("click", roles, name) | ("fill", roles, name, text)
# | ("type", roles, name, text) | ("drag", roles, name, roles, name) | ("key", key).
# A name is matched exactly, else as the start of an element's name.
TASKS: list[tuple[str, list[tuple], str]] = [
    ("choices: pick Germany in a searchable select", [
        ("nav", "widgets/choices.html"),
        ("click", ("combobox",), ""),
        ("type", ("textbox", "searchbox"), "", "Ger"),
        ("click", ("option",), "Germany"),
        ("click", ("button",), "Send"),
    ], "country=de"),
    ("bootstrap: dropdown item, then a modal form", [
        ("nav", "widgets/bootstrap.html"),
        ("click", ("button",), "Actions"),
        ("click", ("link", "menuitem"), "Archive"),
        ("click", ("button",), "Edit profile"),
        ("fill", ("textbox",), "Display name", "Grace Hopper"),
        ("click", ("button",), "Save changes"),
    ], "name=Grace Hopper"),
    ("sweetalert2: confirm a deletion", [
        ("nav", "widgets/sweetalert.html"),
        ("click", ("button",), "Delete account"),
        ("click", ("button",), "Yes, delete it"),
    ], "deleted=true"),
    ("htmx: search, then load more", [
        ("nav", "widgets/htmx.html"),
        ("fill", ("textbox", "searchbox"), "Query", "ochre"),
        ("click", ("button",), "Search"),
        ("click", ("button",), "Load more"),
    ], "more=1"),
    ("pikaday: pick a date next month", [
        ("nav", "widgets/pikaday.html"),
        ("click", ("textbox",), "Arrival"),
        ("click", ("button",), "Next Month"),
        ("click", ("button", "gridcell"), "15"),
        ("click", ("button",), "Book"),
    ], "arrival=Sun Feb 15 2026"),
    ("sortablejs: drag an item to the top", [
        ("nav", "widgets/sortable.html"),
        ("drag", ("generic", "listitem"), "Charlie", ("generic", "listitem"), "Alpha"),
        ("click", ("button",), "Save order"),
    ], "order=Charlie,Alpha,Bravo"),
    ("cross-site frame: pay with a card", [
        ("nav", "checkout.html"),
        ("fill", ("textbox",), "Card number", "4242 4242"),
        ("fill", ("textbox",), "Name on card", "Ada Lovelace"),
        ("click", ("button",), "Pay now"),
    ], "holder=Ada Lovelace"),
]


PW_TRAILING_NAME = re.compile(r"\[ref=([^\]\s]+)\][^:\n]*: ([^\n]+)$", re.MULTILINE)


class Site:
    """fixtures/sites on 127.0.0.1 (and localhost: the same server, another
    site), /vendor/ from the npm modules, /record remembered."""

    def __init__(self, modules: Path) -> None:
        self.records: list[str] = []
        site = self
        sites = ROOT / "fixtures" / "sites"

        class Handler(SimpleHTTPRequestHandler):
            def translate_path(self, path: str) -> str:
                p = urllib.parse.urlsplit(path).path
                if p.startswith("/vendor/"):
                    return str(modules / urllib.parse.unquote(p[len("/vendor/"):]))
                return str(sites / urllib.parse.unquote(p.lstrip("/")))

            def do_GET(self) -> None:  # noqa: N802
                u = urllib.parse.urlsplit(self.path)
                if u.path == "/record":
                    site.records.append(urllib.parse.unquote_plus(u.query))
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")
                    return
                super().do_GET()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("0.0.0.0", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}/"

    async def wait(self, needle: str, seconds: float = 5.0) -> bool:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if any(needle in r for r in self.records):
                return True
            await asyncio.sleep(0.05)
        return False


def pick(nodes, roles: tuple, name: str):
    for exact in (True, False):
        for n in nodes:
            nm = n.name or ""
            if n.role in roles and (nm == name if exact else (name and nm.startswith(name))):
                return n.ref
    if not name:
        for n in nodes:
            if n.role in roles:
                return n.ref
    raise LookupError(f"no {'/'.join(roles)} named {name!r}")


async def act(h, server: str, adapter, step: tuple, base: str) -> int:
    """One step; the bytes of every response it took."""
    kind = step[0]
    if kind == "nav":
        return len((await adapter.navigate(base + step[1])).encode())
    snap = await adapter.snapshot()
    size = len(snap.encode())
    nodes = adapter.nodes(snap)
    if server == "playwright":
        # playwright-mcp writes some names after the ref (`- listitem [ref=e5]: Charlie`).
        extra = PW_TRAILING_NAME.findall(snap)
        nodes = [n if n.name or not (m := next((t for r, t in extra if r == n.ref), None))
                 else type(n)(n.ref, n.role, m) for n in nodes]
    if kind == "drag":
        src, dst = pick(nodes, step[1], step[2]), pick(nodes, step[3], step[4])
        if server == "ochre":
            out = await adapter.call("drag_drop", {"source": src, "target": dst})
        else:
            out = await adapter.call("browser_drag", {"startElement": step[2], "startTarget": src,
                                                      "endElement": step[4], "endTarget": dst})
        return size + len(out.encode())
    ref = pick(nodes, step[1], step[2])
    if kind == "click":
        out = await adapter.click(ref)
    elif kind == "fill":
        out = await adapter.fill(ref, step[3])
    elif kind == "type":
        if server == "ochre":
            out = await adapter.call("type", {"ref": ref, "text": step[3]})
        else:
            out = await adapter.call("browser_type", {"target": ref, "text": step[3], "slowly": True})
    else:
        raise ValueError(kind)
    return size + len(out.encode())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ochre-cmd", default=h.DEFAULT_OCHRE_CMD)
    ap.add_argument("--node-bin", default=str(h.DEFAULT_NODE_BIN))
    ap.add_argument("--chromium", default=h.DEFAULT_CHROMIUM)
    ap.add_argument("--modules", default=str(ROOT / "target" / "test-npm" / "widgets" / "node_modules"))
    ap.add_argument("--runs", type=int, default=3)
    opts = ap.parse_args()

    if not Path(opts.modules).is_dir():
        print(f"no UI libraries at {opts.modules}: run `cargo test -p ochre-tests --test widgets` first")
        return 2
    site = Site(Path(opts.modules))
    profiles = {"ochre": h.OchreAdapter, "playwright": h.PlaywrightAdapter}

    async def run_task(server: str, steps: list[tuple], expect: str) -> dict:
        cls = profiles[server]
        with tempfile.TemporaryDirectory(prefix="ochre-widget-bench-") as tmp:
            command = cls.command(opts, Path(tmp))
            params = StdioServerParameters(command=command[0], args=command[1:], cwd=tmp)
            with open(Path(tmp) / "stderr.log", "w") as errlog:
                async with (
                    stdio_client(params, errlog=errlog) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    adapter = cls(session)
                    await adapter.open()
                    site.records.clear()
                    total, error = 0, None
                    t0 = time.perf_counter()
                    try:
                        for step in steps:
                            total += await act(h, server, adapter, step, site.base)
                        ok = await site.wait(expect)
                    except Exception as e:  # noqa: BLE001 - a failed task is a result
                        ok, error = False, f"{type(e).__name__}: {str(e)[:800]}"
                    took = time.perf_counter() - t0
        return {"ok": ok, "bytes": total, "s": took, "error": error}

    async def all_runs() -> list[tuple[str, dict]]:
        rows = []
        for title, steps, expect in TASKS:
            res = {}
            for server in ("playwright", "ochre"):
                runs = [await run_task(server, steps, expect) for _ in range(opts.runs)]
                res[server] = {
                    "ok": sum(r["ok"] for r in runs),
                    "bytes": sorted(r["bytes"] for r in runs)[len(runs) // 2],
                    "s": sorted(r["s"] for r in runs)[len(runs) // 2],
                    "errors": [r["error"] for r in runs if r["error"]],
                }
            rows.append((title, res))
        return rows

    rows = asyncio.run(all_runs())
    print(f"runs per task and server: {opts.runs} (medians)\n")
    print("| task | playwright-mcp done | bytes | s | ochre done | bytes | s | bytes ratio | time ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    tot = {"playwright": [0, 0.0], "ochre": [0, 0.0]}
    for title, r in rows:
        p, o = r["playwright"], r["ochre"]
        for k, v in (("playwright", p), ("ochre", o)):
            tot[k][0] += v["bytes"]
            tot[k][1] += v["s"]
        print(f"| {title} | {p['ok']}/{opts.runs} | {p['bytes']} | {p['s']:.2f} | {o['ok']}/{opts.runs} | "
              f"{o['bytes']} | {o['s']:.2f} | {o['bytes'] / max(p['bytes'], 1):.2f}x | {o['s'] / max(p['s'], 1e-9):.2f}x |")
    p, o = tot["playwright"], tot["ochre"]
    print(f"| all | | {p[0]} | {p[1]:.2f} | | {o[0]} | {o[1]:.2f} | {o[0] / max(p[0], 1):.2f}x | {o[1] / max(p[1], 1e-9):.2f}x |")
    for title, r in rows:
        for server in ("playwright", "ochre"):
            for e in r[server]["errors"][:1]:
                print(f"\n{server} on {title!r}: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
