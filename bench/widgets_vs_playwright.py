#!/usr/bin/env python3
"""The widget suite as an agent does it, ochre against playwright-mcp: the same
steps on the same pages (real UI libraries from npm: Choices.js, Bootstrap,
SweetAlert2, htmx, Pikaday, SortableJS; a page with a cross-site payment frame;
MUI components bundled with React) and on heavy apps from PyPI (a marimo
notebook, a NiceGUI form, sqlite-web), each started fresh for each run.
Each "act on X" step is a snapshot, a lookup of X by role and name in it, and
the action, as an agent without memory of the page would do it. Prints, per task
and server: whether the task reached the server (the /record request the page
sends), total response bytes, wall time, and the ratios.

Uses bench/harness.py for the servers' adapters (command lines, tool calls,
snapshot parsing). Setup:
    bash bench/setup.sh                    # venv + playwright-mcp in target/bench
    cargo build --release -p ochre --bins
    python3 tests/third-party/install.py ensure widgets mui marimo nicegui sqlite-web
                                               # the UI libraries and the apps' venvs (the tests' cache)
    cargo test -p ochre-tests --test browser widgets::   # bundles the MUI app beside its node_modules
Run:
    target/bench/venv/bin/python bench/widgets_vs_playwright.py [--only WORD]

A step that one server's agent cannot do the way the task needs it (no setter for
a custom slider: the keys, one call each) is done the way that agent would do it:
the table counts the calls' bytes and time all the same.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import re
import contextlib
import shutil
import socket
import sqlite3
import subprocess
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
# | ("type", roles, name, text) | ("drag", roles, name, roles, name) | ("key", key)
# | ("choose", roles, name, option) | ("choose_typed", roles, name, text, option)
# | ("slide", roles, name, value, low) | ("click_nth", roles, name, index)
# | ("type_last", roles, text) | ("wait_text", text) | ("see", text).
# A name is matched exactly, else as the start of an element's name (case aside).
# A page is a path on the fixture site, or "app:PATH" on the task's app.
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
    ("mui: select, autocomplete, slider, date, dialog, send", [
        ("nav", "mui/index.html?run=7"),
        ("fill", ("textbox",), "Your name", "Ada Lovelace"),
        ("choose", ("combobox",), "Country", "Germany"),
        ("choose_typed", ("combobox",), "City", "Tok", "Tokyo"),
        ("slide", ("slider",), "Budget share", 55, 0),
        ("type", ("spinbutton",), "Month", "04092016"),
        ("click", ("checkbox",), "I accept the terms"),
        ("click", ("button",), "Review"),
        ("click", ("button",), "Confirm"),
        ("click", ("button",), "Send"),
    ], "form=mui&run=7&name=Ada Lovelace&country=de&city=Tokyo"),
]

# Heavy apps from PyPI (venvs the heavy_apps tests made): started fresh for each
# run; the task is done when its check (on the app's own files) holds.
APP_TASKS: list[tuple[str, str, list[tuple]]] = [
    ("nicegui: fill a Quasar form and submit", "nicegui", [
        ("nav", "app:/"),
        ("fill", ("textbox",), "Traveller name", "Ada Lovelace"),
        ("choose", ("combobox",), "Colour", "Ochre"),
        ("choose", ("combobox",), "Extras", "Parking"),
        ("choose", ("combobox",), "Extras", "Sauna"),
        ("slide", ("slider",), "Nights", 5, 1),
        ("click", ("checkbox",), "Send me the newsletter"),
        ("click", ("radio",), "Suite"),
        ("click", ("button",), "Submit"),
    ]),
    ("sqlite-web: sort, query, edit a row", "sqlite-web", [
        ("nav", "app:/person/content/"),
        ("click", ("link",), "age"),
        ("nav", "app:/person/query/"),
        ("fill", ("textbox",), "", "SELECT name, city\nFROM person\nWHERE age > 40\nORDER BY name"),
        ("click", ("button",), "Execute"),
        ("see", "Manchester"),
        ("nav", "app:/person/update/" + base64.b64encode(b"[3]").decode() + "/"),
        ("click_nth", ("checkbox",), "Allow updating this column.", 2),
        ("fill", ("textbox",), "city", "Paris"),
        ("click", ("button",), "Update"),
    ]),
    ("marimo: a new cell typed, run, its output read", "marimo", [
        ("nav", "app:/"),
        ("wait_text", "Python"),
        ("click", ("button",), "Python"),
        ("type_last", ("textbox",), 'v = 6 * 7\nopen("result.txt", "w").write(str(v))\nv * 1000'),
        ("key", "Control+Enter"),
        ("see", "42000"),
    ]),
]


PW_TRAILING_NAME = re.compile(r"\[ref=([^\]\s]+)\][^:\n]*: ([^\n]+)$", re.MULTILINE)


class Site:
    """fixtures/sites on 127.0.0.1 (and localhost: the same server, another
    site), /vendor/ from the npm modules, /record remembered."""

    def __init__(self, modules: Path, mui: Path | None) -> None:
        self.records: list[str] = []
        site = self
        sites = ROOT / "fixtures" / "sites"

        class Handler(SimpleHTTPRequestHandler):
            def translate_path(self, path: str) -> str:
                p = urllib.parse.urlsplit(path).path
                if p.startswith("/vendor/"):
                    return str(modules / urllib.parse.unquote(p[len("/vendor/"):]))
                if p.startswith("/mui/") and mui is not None:
                    return str(mui / urllib.parse.unquote(p[len("/mui/"):]))
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


def picks(nodes, roles: tuple, name: str) -> list[str]:
    """Refs of the nodes of these roles named `name` (exactly, else by its start;
    case aside: a page may show a name in capitals)."""
    want = name.lower()
    for exact in (True, False):
        found = [n.ref for n in nodes if n.role in roles
                 and ((n.name or "").lower() == want if exact else (want and (n.name or "").lower().startswith(want)))]
        if found:
            return found
    if not name:
        return [n.ref for n in nodes if n.role in roles]
    return []


def pick(nodes, roles: tuple, name: str):
    found = picks(nodes, roles, name)
    if not found:
        raise LookupError(f"no {'/'.join(roles)} named {name!r}")
    return found[0]


def third_party(name: str) -> Path:
    """Where the tests' installer keeps the entry `name` (tests/third-party/pins.toml)."""
    out = subprocess.run([sys.executable, str(ROOT / "tests" / "third-party" / "install.py"), "path", name],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


class App:
    """A heavy app from its test venv (tests/third-party, entry <name>) on a free
    port, over fresh files in a temporary dir; `done()` checks its own files."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.dir = Path(tempfile.mkdtemp(prefix=f"ochre-app-bench-{kind}-"))
        venv = third_party(kind).parent
        if not venv.is_dir():
            raise FileNotFoundError(f"no venv at {venv}: run `python3 tests/third-party/install.py ensure {kind}` first")
        with socket.socket() as so:
            so.bind(("127.0.0.1", 0))
            self.port = so.getsockname()[1]
        env = dict(os.environ, HOME=str(self.dir))
        if kind == "nicegui":
            cmd = [str(venv / "python"), str(ROOT / "fixtures" / "apps" / "nicegui_form.py"), str(self.port),
                   str(self.dir / "submitted.json")]
        elif kind == "sqlite-web":
            db = sqlite3.connect(self.dir / "people.db")
            db.execute("create table person(id integer primary key, name text, city text, age integer)")
            db.executemany("insert into person(name, city, age) values (?, ?, ?)", [
                ("Ada", "London", 36), ("Linus", "Helsinki", 28), ("Grace", "New York", 45),
                ("Alan", "Manchester", 41), ("Edsger", "Rotterdam", 50)])
            db.commit()
            db.close()
            cmd = [str(venv / "sqlite_web"), "-H", "127.0.0.1", "-p", str(self.port), "-x", str(self.dir / "people.db")]
        else:
            (self.dir / "nb.py").write_text((ROOT / "fixtures" / "apps" / "marimo_notebook.py").read_text())
            cmd = [str(venv / "marimo"), "edit", "nb.py", "--headless", "--no-token", "--skip-update-check",
                   "--no-sandbox", "-p", str(self.port)]
        self.proc = subprocess.Popen(cmd, cwd=self.dir, env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        end = time.monotonic() + 60
        while time.monotonic() < end:
            with socket.socket() as so:
                if so.connect_ex(("127.0.0.1", self.port)) == 0:
                    break
            time.sleep(0.1)
        else:
            self.close()
            raise TimeoutError(f"{kind} did not listen on {self.port}")
        self.base = f"http://127.0.0.1:{self.port}"

    def done(self) -> bool:
        if self.kind == "nicegui":
            f = self.dir / "submitted.json"
            if not f.exists():
                return False
            got = json.loads(f.read_text())
            return got == {"name": "Ada Lovelace", "colour": "Ochre", "extras": ["Parking", "Sauna"],
                           "nights": 5, "subscribe": True, "room": "Suite"}
        if self.kind == "sqlite-web":
            db = sqlite3.connect(self.dir / "people.db")
            try:
                return db.execute("select city from person where id = 3").fetchall() == [("Paris",)]
            finally:
                db.close()
        f = self.dir / "result.txt"
        return f.exists() and f.read_text() == "42"

    def state(self) -> str:
        """What the app's files hold, for a failed task's report."""
        if self.kind == "nicegui":
            f = self.dir / "submitted.json"
            return f.read_text() if f.exists() else "nothing submitted"
        if self.kind == "sqlite-web":
            db = sqlite3.connect(self.dir / "people.db")
            try:
                return repr(db.execute("select * from person where id = 3").fetchall())
            finally:
                db.close()
        f = self.dir / "result.txt"
        return f.read_text() if f.exists() else "no result.txt"

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, 9)
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


async def act(h, server: str, adapter, step: tuple, base: str, app_base: str | None = None) -> int:
    """One step; the bytes of every response it took."""
    kind = step[0]
    if kind == "nav":
        page = step[1]
        url = app_base + page[len("app:"):] if page.startswith("app:") else base + page
        return len((await adapter.navigate(url)).encode())
    if kind == "key":
        tool = "press_key" if server == "ochre" else "browser_press_key"
        return len((await adapter.call(tool, {"key": step[1]})).encode())
    if kind == "wait_text":
        if server == "ochre":
            expr = f"document.body.innerText.toLowerCase().includes({json.dumps(step[1].lower())})"
            out = await adapter.call("wait_for", {"type": "function", "value": expr, "timeout": 20000})
        else:
            out = await adapter.call("browser_wait_for", {"text": step[1]})
        return len(out.encode())
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
    if kind == "see":
        if step[1] not in snap:
            # Not shown yet: an agent waits for it, then reads again.
            size += await act(h, server, adapter, ("wait_text", step[1]), base, app_base)
            snap = await adapter.snapshot()
            size += len(snap.encode())
            if step[1] not in snap:
                raise LookupError(f"{step[1]!r} is not in the snapshot")
        return size
    if kind == "type_last":
        found = [n.ref for n in nodes if n.role in step[1]]
        if not found:
            raise LookupError(f"no {'/'.join(step[1])}")
        if server == "ochre":
            out = await adapter.call("type", {"ref": found[-1], "text": step[2]})
        else:
            out = await adapter.call("browser_type", {"target": found[-1], "element": "the new cell", "text": step[2], "slowly": True})
        return size + len(out.encode())
    if kind == "click_nth":
        found = picks(nodes, step[1], step[2])
        if len(found) <= step[3]:
            raise LookupError(f"fewer than {step[3] + 1} {'/'.join(step[1])} named {step[2]!r}")
        return size + len((await adapter.click(found[step[3]])).encode())
    ref = pick(nodes, step[1], step[2])
    if kind in ("choose", "choose_typed", "slide") and server == "ochre":
        value = step[4] if kind == "choose_typed" else step[3]
        return size + len((await adapter.call("form_input", {"ref": ref, "value": value})).encode())
    if kind in ("choose", "choose_typed"):
        # As an agent with clicks and keys: the option if its list is open, else
        # open the list (typing where it takes typing), then click the option.
        option = step[4] if kind == "choose_typed" else step[3]
        listed = picks(nodes, ("option", "menuitem"), option)
        if not listed:
            if kind == "choose_typed":
                size += len((await adapter.call("browser_type", {"target": ref, "element": step[2], "text": step[3], "slowly": True})).encode())
            else:
                size += len((await adapter.click(ref)).encode())
            again = await adapter.snapshot()
            size += len(again.encode())
            listed = [pick(adapter.nodes(again), ("option", "menuitem"), option)]
        return size + len((await adapter.click(listed[0])).encode())
    if kind == "slide":
        # Its form tool's slider setter (a native range input takes it), else keys
        # on the focused slider: to its start, then one step at a time.
        field = {"name": step[2], "type": "slider", "target": ref, "value": str(step[3])}
        try:
            return size + len((await adapter.call("browser_fill_form", {"fields": [field]})).encode())
        except h.ToolError as e:
            size += len(str(e).encode())
        size += len((await adapter.click(ref)).encode())
        size += len((await adapter.call("browser_press_key", {"key": "Home"})).encode())
        moves = step[3] - step[4]
        for _ in range(3):
            key = "ArrowRight" if moves > 0 else "ArrowLeft"
            for _ in range(abs(moves)):
                size += len((await adapter.call("browser_press_key", {"key": key})).encode())
            # Read it back as an agent does: the value the page shows by the slider.
            snap = await adapter.snapshot()
            size += len(snap.encode())
            lines = snap.splitlines()
            at = next((i for i, l in enumerate(lines) if f"[ref={ref}]" in l), None)
            shown = None
            for l in lines[at:at + 3] if at is not None else []:
                m = re.search(r'(?:valuenow|: )"?(-?\d+(?:\.\d+)?)"?\s*$', l)
                if m:
                    shown = float(m.group(1))
                    break
            if shown is None or shown == step[3]:
                break
            moves = int(step[3] - shown)
        return size
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
    ap.add_argument("--modules", default=str(third_party("widgets")))
    ap.add_argument("--mui", default=None, help="the MUI bundle dir (default: the newest site-* beside the mui entry's node_modules)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default=None, help="run the tasks whose title has this word")
    opts = ap.parse_args()

    if not Path(opts.modules).is_dir():
        print(f"no UI libraries at {opts.modules}: run `python3 tests/third-party/install.py ensure widgets` first")
        return 2
    builds = sorted(third_party("mui").parent.glob("site-*/bundle.js"), key=lambda p: p.stat().st_mtime)
    mui = Path(opts.mui) if opts.mui else (builds[-1].parent if builds else None)
    site = Site(Path(opts.modules), mui)
    profiles = {"ochre": h.OchreAdapter, "playwright": h.PlaywrightAdapter}

    async def run_task(server: str, steps: list[tuple], expect: str, app_kind: str | None = None) -> dict:
        cls = profiles[server]
        app = App(app_kind) if app_kind else None
        try:
            return await run_steps(cls, server, steps, expect, app)
        finally:
            if app:
                app.close()

    async def run_steps(cls, server: str, steps: list[tuple], expect: str, app: App | None) -> dict:
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
                            try:
                                total += await act(h, server, adapter, step, site.base, app.base if app else None)
                            except h.ToolError as e:
                                # A server that asks for a new snapshot gets one, and
                                # the step once more, as an agent does.
                                if "capturing new snapshot" not in str(e):
                                    raise
                                total += len(str(e).encode())
                                total += await act(h, server, adapter, step, site.base, app.base if app else None)
                        if app is None:
                            ok = await site.wait(expect)
                        else:
                            end = time.monotonic() + 5
                            while not (ok := app.done()) and time.monotonic() < end:
                                await asyncio.sleep(0.05)
                            if not ok:
                                error = f"the app's files do not show the task done: {app.state()}"
                    except Exception as e:  # noqa: BLE001 - a failed task is a result
                        ok, error = False, f"{type(e).__name__}: {str(e)[:800]}"
                    took = time.perf_counter() - t0
        return {"ok": ok, "bytes": total, "s": took, "error": error}

    async def all_runs() -> list[tuple[str, dict]]:
        rows = []
        tasks = [(t, steps, expect, None) for t, steps, expect in TASKS]
        tasks += [(t, steps, "", kind) for t, kind, steps in APP_TASKS]
        for title, steps, expect, kind in tasks:
            if opts.only and opts.only.lower() not in title.lower():
                continue
            if title.startswith("mui") and mui is None:
                print(f"skipped {title!r}: no MUI bundle (run `cargo test -p ochre-tests --test browser widgets::`)")
                continue
            res = {}
            for server in ("playwright", "ochre"):
                runs = [await run_task(server, steps, expect, kind) for _ in range(opts.runs)]
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
