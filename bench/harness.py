"""What the benchmark scripts in bench/ share: a fixture web server, memory
sampling of a server's process tree, and one adapter per MCP browser server
(how to start it, and navigate / snapshot / click / fill as its tool calls).

Runs in the venv that `bash bench/setup.sh` makes (target/bench/venv).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shlex
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

try:
    import psutil
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

    def sample(self, root: psutil.Process, with_pss: bool = False) -> None:
        try:
            procs = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
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
    def sampling(self, root: psutil.Process) -> Iterator[ProcessTree]:
        """Samples the tree from a background thread while the block runs, and once more at its end."""
        stop = threading.Event()

        def loop() -> None:
            n = 0
            while not stop.is_set():
                self.sample(root, with_pss=n % self.PSS_EVERY_N == 0)
                n += 1
                stop.wait(self.SAMPLE_EVERY_S)

        thread = threading.Thread(target=loop, name="tree-sampler", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            stop.set()
            thread.join()
            self.sample(root, with_pss=True)

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


ADAPTERS: dict[str, type[Adapter]] = {cls.name: cls for cls in (PlaywrightAdapter, DevToolsAdapter, OchreAdapter)}
