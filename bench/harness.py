"""What the benchmark scripts in bench/ share: a fixture web server, memory
sampling of a server's process tree, and one adapter per MCP browser server
(how to start it, and navigate / snapshot / click / fill as its tool calls).

Runs in the venv that `bash bench/setup.sh` makes (target/bench/venv).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

try:
    import psutil
    import websockets
    from mcp import StdioServerParameters
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client
except ImportError as missing:
    sys.exit(
        f"{missing}: run the benchmarks with the venv python that `bash bench/setup.sh` installs "
        "(target/bench/venv/bin/python)"
    )

REPO = Path(__file__).resolve().parents[1]
BENCH_HOME = Path(os.environ.get("OCHRE_BENCH_HOME") or REPO / "target" / "bench")  # as bench/setup.sh
DEFAULT_NODE_BIN = BENCH_HOME / "node_modules" / ".bin"
DEFAULT_CHROMIUM = "/usr/bin/chromium"
DEFAULT_OCHRE_CMD = f"{REPO / 'target' / 'release' / 'ochre'} --headless"

# Given to the peers' browsers; ochre passes the same ones to its own.
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)

# --- fixture server -------------------------------------------------------------


class _FixtureHandler(SimpleHTTPRequestHandler):
    """Static files from the fixture root; POST /post answers 200 and keeps the body."""

    server: FixtureServer

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.split("?")[0] != "/post":
            self.send_error(404)
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.posts.append(body)
        reply = json.dumps({"form": body.decode("utf-8", "replace")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Quiet, except for failures: they point at a broken fixture tree."""
        if isinstance(code, int) and code >= 400 and self.path != "/favicon.ico":
            sys.stderr.write(f"fixture server: {code} {self.command} {self.path}\n")

    def log_error(self, *args: Any) -> None:
        """Already reported by log_request."""


class FixtureServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), functools.partial(_FixtureHandler, directory=str(root)))
        self.posts: list[bytes] = []


def rounds_options(rounds: int) -> argparse.Namespace:
    """The options of a benchmark that runs rounds of steps on ochre over the
    fixture pages: --ochre-cmd, --chromium, --fixtures and --rounds (default
    `rounds`), parsed."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--ochre-cmd", default=DEFAULT_OCHRE_CMD)
    ap.add_argument("--chromium", default=DEFAULT_CHROMIUM)
    ap.add_argument("--fixtures", type=Path, default=BENCH_HOME / "fixtures")
    ap.add_argument("--rounds", type=int, default=rounds)
    return ap.parse_args()


def start_fixture_server(root: Path) -> tuple[FixtureServer, str]:
    """Serves root on a free 127.0.0.1 port from a daemon thread; returns (server, base URL ending in /)."""
    if not Path(root).is_dir():
        raise FileNotFoundError(f"no fixture folder at {root} (run `bash bench/setup.sh`)")
    server = FixtureServer(Path(root))
    threading.Thread(target=server.serve_forever, name="fixture-server", daemon=True).start()
    host, port = server.server_address[:2]
    return server, f"http://{host}:{port}/"


# --- process tree -----------------------------------------------------------------


class ProcessTree:
    """Peak memory of a process and its descendants (browsers included), and what is left after it ends."""

    SAMPLE_EVERY_S = 0.1
    PSS_EVERY_N = 10  # PSS reads smaps_rollup, a few ms a process: once a second
    LEAK_GRACE_S = 5.0

    def __init__(self) -> None:
        self.peak_rss = 0  # bytes; counts pages shared between processes once per process
        self.peak_pss = 0  # bytes; shared pages split between the processes sharing them
        self.peak_procs = 0
        self.seen: dict[int, psutil.Process] = {}

    def sample(self, root: psutil.Process, with_pss: bool = False, also: Callable[[], list[psutil.Process]] | None = None) -> None:
        procs = []
        for top in [root, *(also() if also else [])]:
            with suppress(psutil.NoSuchProcess):
                procs += [top, *top.children(recursive=True)]
        if not procs:
            return
        rss = pss = 0
        for proc in procs:
            try:
                if with_pss:
                    info = proc.memory_full_info()
                    rss, pss = rss + info.rss, pss + info.pss
                else:
                    rss += proc.memory_info().rss
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            self.seen.setdefault(proc.pid, proc)
        self.peak_rss = max(self.peak_rss, rss)
        self.peak_pss = max(self.peak_pss, pss)
        self.peak_procs = max(self.peak_procs, len(procs))

    @contextmanager
    def sampling(
        self, root: psutil.Process, also: Callable[[], list[psutil.Process]] | None = None
    ) -> Iterator[ProcessTree]:
        """Samples the tree from a background thread while the block runs, and once more at its end;
        `also` names more roots (a server's detached daemon, found while it runs)."""
        stop = threading.Event()

        def loop() -> None:
            n = 0
            while not stop.is_set():
                self.sample(root, with_pss=n % self.PSS_EVERY_N == 0, also=also)
                n += 1
                stop.wait(self.SAMPLE_EVERY_S)

        thread = threading.Thread(target=loop, name="tree-sampler", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            stop.set()
            thread.join()
            self.sample(root, with_pss=True, also=also)

    def reap(self) -> int:
        """Gives every process seen LEAK_GRACE_S to exit, kills the rest; returns how many had to be killed."""
        deadline = time.monotonic() + self.LEAK_GRACE_S
        alive = self._alive()
        while alive and time.monotonic() < deadline:
            time.sleep(0.1)
            alive = self._alive()
        for proc in alive:
            with suppress(psutil.NoSuchProcess):
                proc.kill()
        return len(alive)

    def _alive(self) -> list[psutil.Process]:
        alive = []
        for proc in self.seen.values():
            with suppress(psutil.NoSuchProcess):
                if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                    alive.append(proc)
        return alive


def spawned_server(children_before: set[int]) -> psutil.Process:
    """The server: the one child of this process that was not among children_before."""
    new = [p for p in psutil.Process().children() if p.pid not in children_before]
    if len(new) != 1:
        raise RuntimeError(f"expected one new child process (the server), found {len(new)}: {new}")
    return new[0]


@asynccontextmanager
async def mcp_stdio(command: list[str], workdir: Path) -> AsyncIterator[tuple[ClientSession, psutil.Process]]:
    """An initialized MCP session with the server `command` starts on stdio (run
    in workdir, its stderr in workdir/stderr.log), and the server's process."""
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(workdir))
    before = {p.pid for p in psutil.Process().children()}
    with open(Path(workdir) / "stderr.log", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session, spawned_server(before)


# --- adapters -------------------------------------------------------------------------


class ToolError(RuntimeError):
    """A tool call answered with isError: true."""


@dataclass(frozen=True)
class Node:
    """A snapshot line that carries an element ref."""

    ref: str
    role: str | None
    name: str | None  # the first quoted string on the line, as written


_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_WORD = re.compile(r"[A-Za-z][\w-]*")


class Adapter:
    """One MCP server: its command line, and the benchmark's operations as its tool calls."""

    name: ClassVar[str]
    REF_RE: ClassVar[re.Pattern[str]]  # group 1 is the ref on a snapshot line

    def __init__(self, session: ClientSession) -> None:
        self.session = session

    @classmethod
    def command(cls, opts: argparse.Namespace, workdir: Path) -> list[str]:
        """The command that starts the server on stdio; workdir is a private folder for this run."""
        raise NotImplementedError

    @classmethod
    def environment(cls, opts: argparse.Namespace, workdir: Path) -> dict[str, str] | None:
        """The server's whole environment, when it needs more than the client's default."""
        return None

    @classmethod
    def detached(cls, workdir: Path) -> list[psutil.Process]:
        """Processes of the run that left the server's tree (a daemon it spawned), to count them too."""
        return []

    async def close(self) -> None:
        """Called at the end of a run, untimed: what the server needs to end everything it started."""

    async def url(self) -> str:
        """The tab's current URL."""
        raise NotImplementedError

    async def whole_snapshot(self) -> str:
        """Everything the model reads to see the whole page: the snapshot, and what it left behind a handle."""
        return await self.snapshot()

    async def acting_snapshot(self) -> str | None:
        """The elements to act on without the page's prose, where the server has such a view (None: not)."""
        return None

    async def page_text(self) -> str:
        """What the page shows, to check an action's effect: the snapshot, where it carries the page's text."""
        return await self.snapshot()

    async def open(self) -> None:
        """The first browser call of a session: a navigation to about:blank (launches the browser)."""
        await self.navigate("about:blank")

    async def navigate(self, url: str) -> str:
        raise NotImplementedError

    async def snapshot(self) -> str:
        raise NotImplementedError

    async def click(self, ref: str) -> str:
        raise NotImplementedError

    async def fill(self, ref: str, text: str) -> str:
        raise NotImplementedError

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        """The text of a tool's answer; ToolError when the server flags it as an error."""
        result = await self.session.call_tool(tool, arguments)
        text = "\n".join(item.text for item in result.content if item.type == "text")
        if result.is_error:
            raise ToolError(f"{self.name}: {tool}({json.dumps(arguments)}) failed: {text[:800]}")
        return text

    def nodes(self, snapshot: str) -> list[Node]:
        """One Node per line with a ref: the role is the first bare word, the name the first quoted string."""
        nodes = []
        for line in snapshot.splitlines():
            found = self.REF_RE.search(line)
            if found is None:
                continue
            rest = f"{line[: found.start()]} {line[found.end() :]}"
            quoted = _QUOTED.search(rest)
            role = _WORD.search(rest[: quoted.start()] if quoted else rest)
            nodes.append(Node(found.group(1), role and role.group(0), quoted and quoted.group(1)))
        return nodes

    def find_ref(self, snapshot: str, text: str, role: str | None = None) -> str:
        """Ref on the first line that contains text (and the role as a word, if given)."""
        role_re = re.compile(rf"\b{re.escape(role)}\b") if role else None
        for line in snapshot.splitlines():
            found = self.REF_RE.search(line)
            if found and text in line and (role_re is None or role_re.search(line)):
                return found.group(1)
        lines_with_refs = sum(bool(self.REF_RE.search(line)) for line in snapshot.splitlines())
        raise LookupError(
            f"{self.name}: no line with a ref contains {text!r}"
            f"{f' and the role {role}' if role else ''} ({lines_with_refs} lines with refs)"
        )


class PlaywrightAdapter(Adapter):
    """@playwright/mcp: headless, isolated profile, the given Chromium; refs look like [ref=e12]."""

    name = "playwright"
    REF_RE = re.compile(r"\[ref=([^\]\s]+)\]")

    @classmethod
    def command(cls, opts: argparse.Namespace, workdir: Path) -> list[str]:
        # Extra browser arguments go through the config file only.
        config = Path(workdir) / "playwright-mcp.json"
        config.write_text(json.dumps({"browser": {"launchOptions": {"args": list(CHROMIUM_ARGS)}}}))
        return [
            str(Path(opts.node_bin) / "playwright-mcp"),
            "--headless",
            "--isolated",
            "--no-sandbox",
            "--executable-path",
            opts.chromium,
            "--config",
            str(config),
        ]

    async def navigate(self, url: str) -> str:
        return await self.call("browser_navigate", {"url": url})

    async def snapshot(self) -> str:
        return await self.call("browser_snapshot", {})

    async def click(self, ref: str) -> str:
        return await self.call("browser_click", {"element": ref, "target": ref})

    async def fill(self, ref: str, text: str) -> str:
        return await self.call("browser_type", {"element": ref, "target": ref, "text": text})

    async def url(self) -> str:
        return await self.call("browser_evaluate", {"function": "() => location.href"})


class DevToolsAdapter(Adapter):
    """chrome-devtools-mcp: headless, isolated profile, the given Chromium; uids look like uid=1_12.

    Its page tools need a pageId: open() takes the selected page from list_pages.
    """

    name = "devtools"
    REF_RE = re.compile(r"\buid=(\S+)")
    page_id: int

    @classmethod
    def command(cls, opts: argparse.Namespace, workdir: Path) -> list[str]:
        return [
            str(Path(opts.node_bin) / "chrome-devtools-mcp"),
            "--headless",
            "--isolated",
            "--executablePath",
            opts.chromium,
            "--no-usage-statistics",
            "--no-performance-crux",
            *(f"--chromeArg={arg}" for arg in CHROMIUM_ARGS),
        ]

    async def open(self) -> None:
        pages = await self.call("list_pages", {})
        selected = re.search(r"^(\d+): .*\[selected\]", pages, re.MULTILINE)
        if selected is None:
            raise ToolError(f"devtools: no selected page in the list_pages answer: {pages[:300]}")
        self.page_id = int(selected.group(1))
        await super().open()

    async def navigate(self, url: str) -> str:
        return await self.call("navigate_page", {"pageId": self.page_id, "type": "url", "url": url})

    async def snapshot(self) -> str:
        return await self.call("take_snapshot", {"pageId": self.page_id})

    async def click(self, ref: str) -> str:
        return await self.call("click", {"pageId": self.page_id, "uid": ref})

    async def fill(self, ref: str, text: str) -> str:
        return await self.call("fill", {"pageId": self.page_id, "uid": ref, "value": text})

    async def url(self) -> str:
        return await self.call("evaluate_script", {"pageId": self.page_id, "function": "() => location.href"})


class OchreAdapter(Adapter):
    """ochre: opts.ochre_cmd with a data dir in the run's workdir and the given Chromium; refs look like ax_12."""

    name = "ochre"
    REF_RE = re.compile(r"\b(ax_\d+)\b")

    @classmethod
    def command(cls, opts: argparse.Namespace, workdir: Path) -> list[str]:
        command = shlex.split(opts.ochre_cmd)
        if not command:
            raise ValueError("the ochre command is empty")
        if "/" in command[0]:  # the server runs in workdir: make a relative path absolute
            command[0] = str(Path(command[0]).resolve())
        chromium = getattr(opts, "chromium", None)
        if chromium and "--chrome-path" not in command:
            command += ["--chrome-path", chromium]
        return [*command, "--data-dir", str(Path(workdir) / "data")]

    async def navigate(self, url: str) -> str:
        return await self.call("navigate", {"url": url})

    def nodes(self, snapshot: str) -> list[Node]:
        """As Adapter.nodes, a table's `row`/`columns` line read cell by cell."""
        lines = []
        for line in snapshot.splitlines():
            head = line.lstrip()
            if head.startswith(("row ", "columns ")):
                lines.extend(head.split(" ", 1)[1].split(" | "))
            else:
                lines.append(line)
        return super().nodes("\n".join(lines))

    async def snapshot(self) -> str:
        return await self.call("read_page", {})

    async def click(self, ref: str) -> str:
        return await self.call("interact", {"ref": ref, "action": "click"})

    async def fill(self, ref: str, text: str) -> str:
        return await self.call("form_input", {"ref": ref, "value": text})

    async def acting_snapshot(self) -> str | None:
        return await self.call("read_page", {"filter": "interactive"})

    async def url(self) -> str:
        page = await self.call("read_page", {"filter": "interactive", "depth": 0})
        return page.split(" ", 1)[0]  # read_page's first line: the URL, then the title

    async def whole_snapshot(self) -> str:
        """read_page; when its answer was capped (a first view and an output handle holding the whole
        snapshot), the handle's payload read with oc_output_fetch: the time of both calls, the bytes of the whole."""
        text = await self.snapshot()
        handle = _HANDLE.search(text)
        if handle is None:
            return text
        parts, offset = [], 0
        while offset is not None:
            page = json.loads(
                await self.call("oc_output_fetch", {"output_handle": handle.group(0), "offset": offset, "limit": 8 << 20})
            )
            parts.append(page["content"])
            offset = page["next_offset"]
        return "".join(parts)


_HANDLE = re.compile(r"\boh_[A-Za-z0-9]{12}\b")


class AgentBrowserAdapter(Adapter):
    """Vercel's agent-browser (npm `agent-browser`): its native binary's MCP mode over stdio (default
    `core` tools), the given Chromium through AGENT_BROWSER_EXECUTABLE_PATH; refs look like [ref=e12].

    Its server starts a daemon that outlives it (its parent becomes init): the run's HOME and
    namespace are private to the run, the daemon is found by them for the memory samples, and
    close() ends it and its browser."""

    name = "agent-browser"
    REF_RE = re.compile(r"\[ref=([^\]\s]+)\]")

    @staticmethod
    def binary(node_bin: str | Path) -> Path:
        arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower(), "x64")
        return Path(node_bin).parent / "agent-browser" / "bin" / f"agent-browser-linux-{arch}"

    @classmethod
    def command(cls, opts: argparse.Namespace, workdir: Path) -> list[str]:
        return [str(cls.binary(opts.node_bin)), "mcp"]

    @classmethod
    def environment(cls, opts: argparse.Namespace, workdir: Path) -> dict[str, str] | None:
        return {
            **os.environ,
            "HOME": str(workdir),
            "AGENT_BROWSER_NAMESPACE": f"bench{os.getpid()}",
            "AGENT_BROWSER_EXECUTABLE_PATH": opts.chromium,
            "AGENT_BROWSER_ARGS": ",".join(CHROMIUM_ARGS),
        }

    @classmethod
    def detached(cls, workdir: Path) -> list[psutil.Process]:
        found = []
        for proc in psutil.process_iter(["name", "ppid"]):
            if proc.info["ppid"] != 1 or not (proc.info["name"] or "").startswith("agent-browser"):
                continue
            with suppress(psutil.Error):
                if proc.environ().get("HOME") == str(workdir):
                    found.append(proc)
        return found

    async def navigate(self, url: str) -> str:
        return await self.call("agent_browser_open", {"url": url})

    async def snapshot(self) -> str:
        return await self.call("agent_browser_snapshot", {})

    async def click(self, ref: str) -> str:
        return await self.call("agent_browser_click", {"selector": f"@{ref}"})

    async def fill(self, ref: str, text: str) -> str:
        return await self.call("agent_browser_fill", {"selector": f"@{ref}", "text": text})

    async def url(self) -> str:
        return await self.call("agent_browser_get_url", {})

    async def acting_snapshot(self) -> str | None:
        """Its snapshot already leaves out the page's prose (headings, landmarks and controls only)."""
        return await self.snapshot()

    async def page_text(self) -> str:
        """Its snapshot has no prose (a field's value, though): the snapshot and the body's text from get_text."""
        return await self.snapshot() + "\n" + await self.call("agent_browser_get_text", {"selector": "body"})

    async def close(self) -> None:
        await self.call("agent_browser_close", {})


# --- raw CDP: the floor -----------------------------------------------------------------


class Cdp:
    """A minimal CDP client over one WebSocket (flattened sessions)."""

    def __init__(self, ws: Any) -> None:
        self.ws, self.next_id, self.waiters, self.events = ws, 0, {}, asyncio.Queue()
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for raw in self.ws:
            msg = json.loads(raw)
            if "id" in msg and msg["id"] in self.waiters:
                self.waiters.pop(msg["id"]).set_result(msg)
            elif "method" in msg:
                self.events.put_nowait(msg)

    async def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self.next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self.waiters[self.next_id] = fut
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        await self.ws.send(json.dumps(msg))
        reply = await asyncio.wait_for(fut, 30)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    async def navigate(self, session: str, url: str) -> float:
        """Page.navigate until that tab's Page.loadEventFired; returns milliseconds."""
        while not self.events.empty():
            self.events.get_nowait()
        t0 = time.perf_counter()
        await self.send("Page.navigate", {"url": url}, session)
        while True:
            ev = await asyncio.wait_for(self.events.get(), 30)
            if ev.get("sessionId") == session and ev["method"] == "Page.loadEventFired":
                return (time.perf_counter() - t0) * 1000

    async def evaluate(self, session: str, expression: str) -> Any:
        reply = await self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)
        if "exceptionDetails" in reply:
            raise RuntimeError(f"Runtime.evaluate: {reply['exceptionDetails']}")
        return reply["result"].get("value")


# The window ochre (and agent-browser, and Playwright) give their pages: the floor's is the same,
# or a page such as rustdoc's would lay out for a narrow screen and load faster than it can for them.
WINDOW = (1280, 720)


async def start_chromium(chromium: str) -> tuple[subprocess.Popen, Path, str]:
    """A headless Chromium with the benchmark's flags, WINDOW and a fresh profile, on a free debugging
    port: (process, profile folder, browser WebSocket URL)."""
    profile = Path(tempfile.mkdtemp(prefix="ochre-bench-chromium-"))
    chrome = subprocess.Popen(
        [
            chromium,
            "--headless",
            *CHROMIUM_ARGS,
            f"--window-size={WINDOW[0]},{WINDOW[1]}",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + 30
    while not port_file.exists() or len(port_file.read_text().split()) < 2:
        if time.monotonic() > deadline or chrome.poll() is not None:
            stop_chromium(chrome, profile)
            raise RuntimeError("Chromium wrote no DevToolsActivePort within 30 s")
        await asyncio.sleep(0.02)
    port, path = port_file.read_text().split()[:2]
    return chrome, profile, f"ws://127.0.0.1:{port}{path}"


def stop_chromium(chrome: subprocess.Popen, profile: Path) -> None:
    chrome.terminate()
    with suppress(subprocess.TimeoutExpired):
        chrome.wait(10)
    chrome.kill()
    shutil.rmtree(profile, ignore_errors=True)


async def navigation_floor_rows(
    raw_navigate: Callable[[str], Any], ochre: Any, pages: list[tuple[str, str]], reps: int
) -> list[dict[str, Any]]:
    """ochre's navigate against raw CDP's on one browser (ochre attached to it): on every page
    (name, url), `reps` times after a warm-up, alternating, a raw navigation (`raw_navigate(url)`:
    its milliseconds), then ochre's, then a read_page (which pays the settle a navigation owes),
    then an MCP call that does nothing in the browser (what any call costs this client). Rows of
    medians; over_ms is ochre's median less raw CDP's, paired_ms the median of each navigation's difference
    from the raw one just before it (steadier where loads drift), spread_ms that difference's range."""
    rows: list[dict[str, Any]] = []
    for name, url in pages:
        raws, ours, noops = [], [], []
        for r in range(reps + 1):
            page = f"{url}{'&' if '?' in url else '?'}r={r}"
            t_raw = await raw_navigate(page)
            start = time.perf_counter()
            await ochre.navigate(page + "&o=1")
            t_ours = (time.perf_counter() - start) * 1000
            await ochre.snapshot()
            start = time.perf_counter()
            await ochre.call("oc_profile_status", {})
            t_noop = (time.perf_counter() - start) * 1000
            if r:  # the first of each is a warm-up (caches)
                raws.append(t_raw)
                ours.append(t_ours)
                noops.append(t_noop)
        med = statistics.median
        rows.append(
            {
                "page": name,
                "raw_cdp_ms": med(raws),
                "ochre_ms": med(ours),
                "over_ms": med(ours) - med(raws),
                "paired_ms": med([o - r for o, r in zip(ours, raws)]),
                "spread_ms": (min(o - r for o, r in zip(ours, raws)), max(o - r for o, r in zip(ours, raws))),
                "mcp_call_ms": med(noops),
                "reps": len(raws),
            }
        )
    return rows

# One pass over the DOM, the least a snapshot does: a line per text and per element an agent
# acts on (role, a name, a ref), no style or layout read. The refs stay on the page for click/fill.
_RAW_SNAPSHOT_JS = r"""(() => {
  const ROLE = {a: "link", button: "button", select: "combobox", textarea: "textbox", summary: "button"};
  const INPUT = {checkbox: "checkbox", radio: "radio", submit: "button", button: "button", reset: "button"};
  const SKIP = new Set(["script", "style", "template", "noscript", "head"]);
  const ACTS = "a[href],button,input,select,textarea,summary,[role],[tabindex]";
  const out = [], refs = [];
  const walk = (node, depth) => {
    for (let c = node.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 3) {
        const t = c.data.trim();
        if (t) out.push(" ".repeat(depth) + "- text: " + t);
      } else if (c.nodeType === 1 && !SKIP.has(c.localName)) {
        if (c.matches(ACTS)) {
          const tag = c.localName;
          const role = c.getAttribute("role") || (tag === "input" ? INPUT[c.type] || "textbox" : ROLE[tag] || tag);
          const name = c.getAttribute("aria-label") || (c.labels && c.labels[0] ? c.labels[0].textContent : "")
            || c.textContent || c.value || "";
          refs.push(c);
          const value = "value" in c && c.value ? ": " + c.value : "";
          out.push(" ".repeat(depth) + "- " + role + ' "' + name.trim().replace(/\s+/g, " ") + '" [ref=' + refs.length + "]" + value);
        }
        walk(c, depth + 1);
      }
    }
  };
  walk(document.body || document.documentElement, 0);
  window.__benchRefs = refs;
  return out.join("\n");
})()"""


class RawCdpAdapter(Adapter):
    """The floor: no MCP server, the benchmark's own CDP calls on its own Chromium, in one tab.

    navigate: Page.navigate until loadEventFired; snapshot: one Runtime.evaluate of a DOM walk;
    click: the element's box (one evaluate), then mouseMoved, mousePressed, mouseReleased at its
    centre; fill: focus and select it (one evaluate), then Input.insertText."""

    name = "cdp"
    REF_RE = re.compile(r"\[ref=(\d+)\]")

    def __init__(self, cdp: Cdp, session: str, ws_url: str) -> None:
        super().__init__(None)  # type: ignore[arg-type] - no MCP session
        self.cdp, self.sid, self.ws_url = cdp, session, ws_url  # ws_url: the browser's CDP endpoint

    async def navigate(self, url: str) -> str:
        await self.cdp.navigate(self.sid, url)
        return ""

    async def snapshot(self) -> str:
        return await self.cdp.evaluate(self.sid, _RAW_SNAPSHOT_JS)

    async def click(self, ref: str) -> str:
        x, y = await self.cdp.evaluate(
            self.sid,
            f"(() => {{ const e = window.__benchRefs[{int(ref) - 1}]; e.scrollIntoView({{block: 'nearest'}});"
            " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()",
        )
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            await self.cdp.send(
                "Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}, self.sid
            )
        return ""

    async def fill(self, ref: str, text: str) -> str:
        await self.cdp.evaluate(self.sid, f"(() => {{ const e = window.__benchRefs[{int(ref) - 1}]; e.focus(); e.select(); }})()")
        await self.cdp.send("Input.insertText", {"text": text}, self.sid)
        return ""

    async def url(self) -> str:
        return await self.cdp.evaluate(self.sid, "location.href")

    @classmethod
    @asynccontextmanager
    async def running(cls, chromium: str) -> AsyncIterator[tuple[RawCdpAdapter, psutil.Process]]:
        """A fresh Chromium and a tab attached; yields (adapter, the browser's process)."""
        chrome, profile, ws_url = await start_chromium(chromium)
        try:
            async with websockets.connect(ws_url, max_size=None) as ws:
                cdp = Cdp(ws)
                target = (await cdp.send("Target.createTarget", {"url": "about:blank"}))["targetId"]
                sid = (await cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True}))["sessionId"]
                await cdp.send("Page.enable", {}, sid)
                try:
                    yield cls(cdp, sid, ws_url), psutil.Process(chrome.pid)
                finally:
                    cdp.reader.cancel()
        finally:
            stop_chromium(chrome, profile)


ADAPTERS: dict[str, type[Adapter]] = {
    cls.name: cls for cls in (PlaywrightAdapter, DevToolsAdapter, AgentBrowserAdapter, OchreAdapter)
}
# Profiles side_by_side.py runs: the MCP servers, and the raw-CDP floor.
PROFILES = (*ADAPTERS, RawCdpAdapter.name)
