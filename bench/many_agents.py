"""Many agents on one machine: N MCP sessions over Streamable HTTP against one
server, ochre and playwright-mcp in the same run, on the same Chromium.

Each session loops navigate -> snapshot -> (click a link | fill a field and
click Send) by the refs of its snapshot, and every click and submit is checked
at the site (the request arrived, with the value typed). Per N: completed
loops/s, p50/p95/p99 per tool, each session's first call, errors, CPU and PSS
of the whole process tree split server / browser / renderers, CPU-seconds per
loop, memory per added session, and a probe: one session's snapshot calls/s
alone and while the N sessions arrive. Then the navigation floor: on a Chromium
this script starts, raw CDP `Page.navigate` -> `loadEventFired` against ochre's
`navigate` (attached to that browser) on every bench page, alternating.

    target/bench/venv/bin/python bench/many_agents.py --sessions 1,8,32 --seconds 40

(`bash bench/many_agents.sh` sets up, builds and writes the report.)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from harness import (
    CHROMIUM_ARGS,
    DEFAULT_CHROMIUM,
    Cdp,
    navigation_floor_rows,
    start_chromium,
    stop_chromium,
    DEFAULT_NODE_BIN,
    DEFAULT_OCHRE_CMD,
    OchreAdapter,
    PlaywrightAdapter,
    ToolError,
)

try:
    import httpx2 as httpx
    import psutil
    import websockets
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
except ImportError as missing:
    sys.exit(f"{missing}: run with the venv python that `bash bench/setup.sh` installs (target/bench/venv/bin/python)")

# --- the site: generated pages, and what arrived -------------------------------------

FILLER = "".join(f"<li>Item {k}: <a href='#item{k}'>details {k}</a></li>" for k in range(12))


def loop_page(sid: str, i: str) -> str:
    return f"""<!doctype html><html><head><title>Session {sid} step {i}</title></head><body>
<header><nav><a href="#top">Home</a> <a href="#about">About</a></nav></header>
<main><h1>Session {sid}, step {i}</h1><p>Some text a reader skims before acting.</p>
<ul>{FILLER}</ul>
<p><a href="/s/{sid}/{i}/next">Next page</a></p>
<form method="post" action="/s/{sid}/{i}/submit">
<label>Your name <input name="name" autocomplete="off"></label>
<button type="submit">Send</button></form></main></body></html>"""


class SiteHandler(BaseHTTPRequestHandler):
    server: Site
    protocol_version = "HTTP/1.1"

    def _reply(self, body: str, status: int = 200, kind: str = "text/html; charset=utf-8") -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        url = urllib.parse.urlsplit(self.path)
        parts = url.path.strip("/").split("/")
        if url.path == "/_seen":
            key = urllib.parse.parse_qs(url.query).get("key", [""])[0]
            with self.server.lock:
                seen = self.server.seen.get(key)
            return self._reply(json.dumps({"seen": seen}), kind="application/json")
        if url.path == "/favicon.ico":
            return self._reply("", 204)
        if len(parts) == 3 and parts[0] == "s":
            return self._reply(loop_page(parts[1], parts[2]))
        if len(parts) == 4 and parts[0] == "s" and parts[3] == "next":
            with self.server.lock:
                self.server.seen[f"{parts[1]}/{parts[2]}/next"] = True
            return self._reply(f"<!doctype html><title>Next</title><h1>Arrived {parts[1]} {parts[2]}</h1>")
        if parts[0] == "fx" and self.server.fixtures:
            return self._static(url.path[len("/fx/") :])
        self._reply("not found", 404)

    def do_POST(self) -> None:  # noqa: N802
        parts = urllib.parse.urlsplit(self.path).path.strip("/").split("/")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        if len(parts) == 4 and parts[0] == "s" and parts[3] == "submit":
            name = urllib.parse.parse_qs(body).get("name", [""])[0]
            with self.server.lock:
                self.server.seen[f"{parts[1]}/{parts[2]}/submit"] = name
            return self._reply(f"<!doctype html><title>Thanks</title><h1>Thanks, {name}</h1>")
        if parts == ["post"]:
            return self._reply(json.dumps({"form": body}), kind="application/json")
        self._reply("not found", 404)

    def _static(self, rel: str) -> None:
        root = Path(self.server.fixtures).resolve()
        path = (root / urllib.parse.unquote(rel)).resolve()
        if root not in path.parents or not path.is_file():
            return self._reply("not found", 404)
        kinds = {".html": "text/html; charset=utf-8", ".css": "text/css", ".js": "text/javascript",
                 ".woff2": "font/woff2", ".svg": "image/svg+xml", ".png": "image/png"}
        data = path.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", kinds.get(path.suffix, "application/octet-stream"))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


class Site(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def __init__(self, fixtures: str | None) -> None:
        import threading

        super().__init__(("127.0.0.1", 0), SiteHandler)
        self.lock = threading.Lock()
        self.seen: dict[str, Any] = {}
        self.fixtures = fixtures


def serve_site(fixtures: str | None) -> None:
    """The site in its own process (so the clients' event loop and the site do not share a GIL)."""
    site = Site(fixtures)
    print(site.server_address[1], flush=True)
    site.serve_forever()


# --- process tree: CPU and PSS split server / browser / renderers ------------------------


def role_of(proc: psutil.Process, server_pid: int) -> str:
    if proc.pid == server_pid:
        return "server"
    try:
        cmd = proc.cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return "gone"
    if not cmd or "chrom" not in Path(cmd[0]).name.lower() and not any("--type=" in a for a in cmd):
        return "server"  # node helpers of the server
    return "renderers" if "--type=renderer" in cmd else "browser"


class Tree:
    """CPU seconds of every process seen under the server (kept after a process ends) and PSS samples."""

    def __init__(self, root: psutil.Process) -> None:
        self.root = root
        self.cpu: dict[int, tuple[str, float, float]] = {}  # pid -> (role, first, last)
        self.pss: list[dict[str, float]] = []
        self.procs = 0

    def _procs(self) -> list[psutil.Process]:
        try:
            return [self.root, *self.root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def sample_cpu(self, baseline: bool = False) -> None:
        for proc in self._procs():
            try:
                t = proc.cpu_times()
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            now = t.user + t.system
            role, first, _ = self.cpu.get(proc.pid) or (role_of(proc, self.root.pid), now if baseline else 0.0, 0.0)
            self.cpu[proc.pid] = (role, first, now)

    def cpu_split(self) -> dict[str, float]:
        out = {"server": 0.0, "browser": 0.0, "renderers": 0.0}
        for role, first, last in self.cpu.values():
            if role in out:
                out[role] += last - first
        return out

    def sample_pss(self) -> None:
        out = {"server": 0.0, "browser": 0.0, "renderers": 0.0}
        procs = self._procs()
        for proc in procs:
            try:
                pss = proc.memory_full_info().pss / 2**20
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            role = self.cpu.get(proc.pid, (role_of(proc, self.root.pid),))[0]
            if role in out:
                out[role] += pss
        self.pss.append(out)
        self.procs = max(self.procs, len(procs))


# --- one agent session ----------------------------------------------------------------------


@dataclass
class Stats:
    calls: dict[str, list[float]] = field(default_factory=dict)  # tool kind -> ms
    first_call_ms: list[float] = field(default_factory=list)
    init_ms: list[float] = field(default_factory=list)
    loops: int = 0
    errors: list[str] = field(default_factory=list)
    arrived: int = 0  # sessions that made their first call, or failed before it
    late: int = 0  # effects that reached the site after the tool answered
    probe_alone: float = 0.0
    probe_arrival: float = 0.0

    def add(self, kind: str, ms: float) -> None:
        self.calls.setdefault(kind, []).append(ms)


class Agent:
    def __init__(self, adapter_cls: type, url: str, site: str, sid: str, stats: Stats) -> None:
        self.adapter_cls, self.url, self.site, self.sid, self.stats = adapter_cls, url, site, sid, stats

    async def timed(self, kind: str, call: Any) -> str:
        t0 = time.perf_counter()
        out = await call
        self.stats.add(kind, (time.perf_counter() - t0) * 1000)
        return out

    async def seen(self, http: httpx.AsyncClient, key: str, want: Any) -> None:
        """The effect at the site: at once, or within 3 s (then counted late); else an error."""
        deadline = time.monotonic() + 3
        first = True
        while True:
            got = (await http.get(f"{self.site}_seen", params={"key": key})).json()["seen"]
            if got == want:
                self.stats.late += not first
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"{key}: the site saw {got!r}, not {want!r}")
            first = False
            await asyncio.sleep(0.05)

    async def step(self, a: Any, http: httpx.AsyncClient, i: int) -> None:
        page = f"{self.site}s/{self.sid}/{i}"
        await self.timed("navigate", a.navigate(page))
        snap = await self.timed("snapshot", a.snapshot())
        if i % 2 == 0:
            await self.timed("click", a.click(a.find_ref(snap, "Next page", "link")))
            await self.seen(http, f"{self.sid}/{i}/next", True)
        else:
            name = f"agent {self.sid} {i}"
            await self.timed("fill", a.fill(a.find_ref(snap, "Your name"), name))
            await self.timed("click", a.click(a.find_ref(snap, "Send", "button")))
            await self.seen(http, f"{self.sid}/{i}/submit", name)

    async def run(self, start_loops: asyncio.Event, stop_at: list[float], arrived: asyncio.Event | None = None,
                  probe: bool = False) -> None:
        first_done = False
        try:
            async with httpx.AsyncClient(timeout=30) as http, streamable_http_client(self.url) as streams, \
                    ClientSession(streams[0], streams[1]) as session:
                t0 = time.perf_counter()
                await session.initialize()
                a = self.adapter_cls(session)
                t1 = time.perf_counter()
                await a.navigate(f"{self.site}s/{self.sid}/0")
                if not probe:  # the probe's first call launches the browser: not a session's arrival
                    self.stats.init_ms.append((t1 - t0) * 1000)
                    self.stats.first_call_ms.append((time.perf_counter() - t1) * 1000)
                self.stats.arrived += 1
                first_done = True
                if probe:
                    await self.probe(a, arrived)
                    return
                await start_loops.wait()
                i = 1
                while time.monotonic() < stop_at[0]:
                    try:
                        await self.step(a, http, i)
                        self.stats.loops += 1
                    except (ToolError, LookupError, AssertionError, TimeoutError, httpx.HTTPError) as err:
                        self.stats.errors.append(f"{self.sid}/{i}: {err}"[:300])
                    i += 1
        except Exception as err:  # noqa: BLE001 - a session that fails is an error of the run, not a crash of the bench
            while isinstance(err, BaseExceptionGroup) and err.exceptions:  # the transport's task groups
                err = err.exceptions[0]
            self.stats.errors.append(f"{self.sid}: session: {type(err).__name__}: {err}"[:300])
            self.stats.arrived += not first_done
            if probe:
                self.probe_go.set()

    async def probe(self, a: Any, arrived: asyncio.Event | None) -> None:
        """snapshot calls/s for 2 s alone, then until every other session has made its first call."""
        t0, n = time.perf_counter(), 0
        while time.perf_counter() - t0 < 2:
            await a.snapshot()
            n += 1
        self.stats.probe_alone = n / (time.perf_counter() - t0)
        self.probe_go.set()
        t0, n = time.perf_counter(), 0
        while arrived is not None and not arrived.is_set():
            await a.snapshot()
            n += 1
        self.stats.probe_arrival = n / max(time.perf_counter() - t0, 1e-3)

    probe_go: asyncio.Event


# --- one server at one N ------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_command(kind: str, opts: argparse.Namespace, port: int, workdir: Path, cdp: str | None = None) -> list[str]:
    if kind == "ochre":
        cmd = OchreAdapter.command(argparse.Namespace(ochre_cmd=opts.ochre_cmd, chromium=opts.chromium), workdir)
        cmd += ["--http", str(port)]
        if cdp:
            cmd = [c for c in cmd if c not in ("--chrome-path", opts.chromium)] + ["--cdp-endpoint", cdp]
        return cmd
    config = workdir / "playwright-mcp.json"
    config.write_text(json.dumps({"browser": {"launchOptions": {"args": list(CHROMIUM_ARGS)}}}))
    return [str(Path(opts.node_bin).resolve() / "playwright-mcp"), "--headless", "--isolated", "--no-sandbox",
            "--executable-path", opts.chromium, "--config", str(config), "--host", "127.0.0.1",
            "--port", str(port), "--allowed-hosts", f"127.0.0.1:{port}"]


def start_server(cmd: list[str], port: int, workdir: Path) -> tuple[subprocess.Popen, str]:
    log = open(workdir / "server.log", "w")
    proc = subprocess.Popen(cmd, cwd=workdir, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{cmd[0]} exited with {proc.returncode}: {(workdir / 'server.log').read_text()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, f"http://127.0.0.1:{port}/mcp"
        time.sleep(0.05)
    raise RuntimeError(f"{cmd[0]} did not listen on {port} within 30 s")


def stop_server(proc: subprocess.Popen) -> None:
    tree = []
    with contextlib.suppress(psutil.NoSuchProcess):
        tree = psutil.Process(proc.pid).children(recursive=True)
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for child in tree:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))]


async def run_level(kind: str, n: int, opts: argparse.Namespace, site: str) -> dict[str, Any]:
    adapter = OchreAdapter if kind == "ochre" else PlaywrightAdapter
    workdir = Path(tempfile.mkdtemp(prefix=f"many-{kind}-{n}-"))
    port = free_port()
    proc, url = start_server(server_command(kind, opts, port, workdir), port, workdir)
    stats = Stats()
    try:
        tree = Tree(psutil.Process(proc.pid))
        start_loops, arrived = asyncio.Event(), asyncio.Event()
        stop_at = [float("inf")]
        probe = Agent(adapter, url, site, f"{kind}{n}p", stats)
        probe.probe_go = asyncio.Event()
        probe_task = asyncio.create_task(probe.run(start_loops, stop_at, arrived, probe=True))
        await probe.probe_go.wait()
        agents = [Agent(adapter, url, site, f"{kind}{n}x{k}", stats) for k in range(n)]
        t_arrive = time.perf_counter()
        tasks = [asyncio.create_task(a.run(start_loops, stop_at)) for a in agents]
        while stats.arrived < n + 1:
            await asyncio.sleep(0.02)
        arrival_s = time.perf_counter() - t_arrive
        arrived.set()
        await probe_task
        # the loops, measured
        tree.sample_cpu(baseline=True)
        client_cpu0 = sum(psutil.Process().cpu_times()[:2])
        loops0, t0 = stats.loops, time.monotonic()
        stop_at[0] = t0 + opts.seconds
        start_loops.set()
        while time.monotonic() < stop_at[0]:
            await asyncio.sleep(min(opts.seconds / 6, 5))
            await asyncio.to_thread(tree.sample_pss)
            tree.sample_cpu()
        await asyncio.gather(*tasks)
        tree.sample_cpu()
        wall = time.monotonic() - t0
        cpu = tree.cpu_split()
        loops = stats.loops - loops0
        pss = {role: statistics.median(s[role] for s in tree.pss) for role in ("server", "browser", "renderers")}
        return {
            "server": kind, "n": n, "seconds": round(wall, 1), "loops": loops, "loops_per_s": loops / wall,
            "errors": len(stats.errors), "error_samples": stats.errors[:5], "late": stats.late,
            "tools": {k: {"calls": len(v), "p50": pct(v, 50), "p95": pct(v, 95), "p99": pct(v, 99)}
                      for k, v in sorted(stats.calls.items())},
            "first_call": {"p50": pct(stats.first_call_ms, 50), "p95": pct(stats.first_call_ms, 95),
                           "max": max(stats.first_call_ms, default=float("nan"))},
            "init": {"p50": pct(stats.init_ms, 50), "p95": pct(stats.init_ms, 95)},
            "arrival_s": arrival_s, "probe_alone_per_s": stats.probe_alone, "probe_arrival_per_s": stats.probe_arrival,
            "cpu_s": cpu, "cpu_s_per_loop": sum(cpu.values()) / max(loops, 1),
            "cores": {k: v / wall for k, v in cpu.items()},
            "client_cores": (sum(psutil.Process().cpu_times()[:2]) - client_cpu0) / wall,
            "pss_mb": pss, "pss_total_mb": sum(pss.values()), "procs": tree.procs,
            # what the server said, when a session failed (its log goes with its workdir)
            "server_log_tail": (workdir / "server.log").read_text(errors="replace")[-3000:] if stats.errors else "",
        }
    finally:
        stop_server(proc)
        shutil.rmtree(workdir, ignore_errors=True)


# --- the navigation floor -----------------------------------------------------------------------


async def navigation_floor(opts: argparse.Namespace, site: str) -> list[dict[str, Any]]:
    chrome, profile, ws_url = await start_chromium(opts.chromium)
    cdp_port = urllib.parse.urlsplit(ws_url).port
    workdir = Path(tempfile.mkdtemp(prefix="many-floor-ochre-"))
    port = free_port()
    proc, url = start_server(server_command("ochre", opts, port, workdir, f"http://127.0.0.1:{cdp_port}"), port, workdir)
    pages = {"loop page": "s/floor/1", "next page": "s/floor/1/next"}
    fixtures = Path(opts.fixtures)
    for name, rel in (("form", "httpbin/forms-post.html"), ("interactive", "interactive/index.html"),
                      ("book", "rust/book/ch08-01-vectors.html"), ("std_index", "rust/std/index.html"),
                      ("vec", "rust/std/vec/struct.Vec.html")):
        if (fixtures / rel).exists():
            pages[name] = f"fx/{rel}"
    rows = []
    try:
        async with websockets.connect(ws_url, max_size=None) as ws, \
                streamable_http_client(url) as streams, ClientSession(streams[0], streams[1]) as session:
            cdp = Cdp(ws)
            target = (await cdp.send("Target.createTarget", {"url": "about:blank"}))["targetId"]
            sid = (await cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True}))["sessionId"]
            await cdp.send("Page.enable", {}, sid)
            await session.initialize()
            ochre = OchreAdapter(session)
            await ochre.navigate("about:blank")
            rows = await navigation_floor_rows(
                lambda page: cdp.navigate(sid, page), ochre, [(n, f"{site}{rel}") for n, rel in pages.items()], opts.floor_reps
            )
            cdp.reader.cancel()
    finally:
        stop_server(proc)
        stop_chromium(chrome, profile)
        shutil.rmtree(workdir, ignore_errors=True)
    return rows


# --- report -----------------------------------------------------------------------------------


def markdown(levels: list[dict[str, Any]], floor: list[dict[str, Any]], meta: dict[str, str]) -> str:
    out = [f"Machine: {meta['machine']}. Chromium: {meta['chromium']}. ochre {meta['commit']}, "
           f"@playwright/mcp {meta['playwright']} (`--port --isolated`: one browser, a context per client). "
           f"{meta['seconds']} s of loops per row, after every session has arrived.", ""]
    by = {(r["server"], r["n"]): r for r in levels}
    ns = sorted({r["n"] for r in levels})
    out += ["| N | server | loops/s | errors | interact p50 / p95 / p99 ms | navigate p50 / p95 | snapshot p50 / p95 "
            "| first call p50 / p95 ms | probe calls/s alone → while N arrive | CPU-s per loop (server / browser / renderers) "
            "| cores used | PSS MB (server / browser / renderers) | MB per added session |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for n in ns:
        for kind in ("ochre", "playwright"):
            r = by.get((kind, n))
            if r is None:
                continue
            nan = {"p50": float("nan"), "p95": float("nan"), "p99": float("nan")}
            t = {k: r["tools"].get(k, nan) for k in ("navigate", "snapshot", "click", "fill")}
            c, p = r["cpu_s"], r["pss_mb"]
            base = by.get((kind, ns[0]))
            per = "–" if base is None or n == base["n"] else f"{(r['pss_total_mb'] - base['pss_total_mb']) / (n - base['n']):.0f}"
            click = t["click"]
            out.append(
                f"| {n} | {kind} | {r['loops_per_s']:.2f} | {r['errors']} | {click.get('p50', 0):.0f} / {click.get('p95', 0):.0f} / {click.get('p99', 0):.0f} "
                f"| {t['navigate']['p50']:.0f} / {t['navigate']['p95']:.0f} | {t['snapshot']['p50']:.0f} / {t['snapshot']['p95']:.0f} "
                f"| {r['first_call']['p50']:.0f} / {r['first_call']['p95']:.0f} | {r['probe_alone_per_s']:.0f} → {r['probe_arrival_per_s']:.1f} "
                f"| {r['cpu_s_per_loop']:.3f} ({c['server'] / max(r['loops'], 1):.3f} / {c['browser'] / max(r['loops'], 1):.3f} / {c['renderers'] / max(r['loops'], 1):.3f}) "
                f"| {sum(r['cores'].values()):.2f} | {r['pss_total_mb']:.0f} ({p['server']:.0f} / {p['browser']:.0f} / {p['renderers']:.0f}) | {per} |")
    out += ["", "Ratios, ochre / playwright-mcp (below 1.00x ochre is faster or smaller; loops/s above 1.00x is more work done):", "",
            "| N | loops/s | interact p95 | first call p95 | MB per added session | CPU-s per loop | errors (ochre / playwright-mcp) |",
            "|---|---|---|---|---|---|---|"]
    for n in ns:
        o, w = by.get(("ochre", n)), by.get(("playwright", n))
        if not o or not w:
            continue
        def ratio(a: float, b: float) -> str:
            return f"{a / b:.2f}x" if b else "–"
        per = "–"
        if n != ns[0] and ("ochre", ns[0]) in by and ("playwright", ns[0]) in by:
            po = (o["pss_total_mb"] - by[("ochre", ns[0])]["pss_total_mb"]) / (n - ns[0])
            pw = (w["pss_total_mb"] - by[("playwright", ns[0])]["pss_total_mb"]) / (n - ns[0])
            per = ratio(po, pw)
        p95 = lambda r: r["tools"].get("click", {}).get("p95", float("nan"))  # noqa: E731
        out.append(f"| {n} | {ratio(o['loops_per_s'], w['loops_per_s'])} | {ratio(p95(o), p95(w))} "
                   f"| {ratio(o['first_call']['p95'], w['first_call']['p95'])} | {per} | {ratio(o['cpu_s_per_loop'], w['cpu_s_per_loop'])} "
                   f"| {o['errors']} / {w['errors']} |")
    if floor:
        out += ["", "Navigation floor (one browser: raw CDP `Page.navigate` → `loadEventFired` in a tab of its own, "
                "then ochre's `navigate` attached to the same browser, alternating, each followed by a `read_page`; medians):", "",
                "| page | raw CDP ms | ochre navigate ms | over the floor ms | paired differences: median (range) ms | a no-op MCP call ms | over the floor, less the MCP call ms |",
                "|---|---|---|---|---|---|---|"]
        for f in floor:
            out.append(f"| {f['page']} | {f['raw_cdp_ms']:.1f} | {f['ochre_ms']:.1f} | {f['over_ms']:+.1f} "
                       f"| {f['paired_ms']:+.1f} ({f['spread_ms'][0]:+.0f} to {f['spread_ms'][1]:+.0f}) "
                       f"| {f['mcp_call_ms']:.1f} | {f['over_ms'] - f['mcp_call_ms']:+.1f} |")
        out += ["", "A no-op MCP call: `oc_profile_status` (no browser work) over the same session and client, "
                "timed as `navigate` is; what any tool call costs here before it does anything."]
    return "\n".join(out) + "\n"


def chromium_version(path: str) -> str:
    try:
        return subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "?"


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", default="1,8,32", help="comma-separated N (default 1,8,32)")
    ap.add_argument("--seconds", type=float, default=40, help="seconds of loops per row (default 40)")
    ap.add_argument("--servers", default="ochre,playwright")
    ap.add_argument("--floor-reps", type=int, default=15, help="navigations per page for the floor (0: skip it)")
    ap.add_argument("--ochre-cmd", default=DEFAULT_OCHRE_CMD)
    ap.add_argument("--chromium", default=DEFAULT_CHROMIUM)
    ap.add_argument("--node-bin", default=str(DEFAULT_NODE_BIN))
    ap.add_argument("--fixtures", default=str(Path(os.environ.get("OCHRE_BENCH_HOME", "target/bench")) / "fixtures"))
    ap.add_argument("--out", help="raw results as JSON")
    ap.add_argument("--markdown", help="the report's tables")
    ap.add_argument("--serve-site", action="store_true", help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.serve_site:
        serve_site(opts.fixtures)
        return 0
    site_proc = subprocess.Popen([sys.executable, __file__, "--serve-site", "--fixtures", opts.fixtures],
                                 stdout=subprocess.PIPE, text=True)
    site = f"http://127.0.0.1:{site_proc.stdout.readline().strip()}/"
    levels, floor = [], []
    try:
        for n in [int(x) for x in opts.sessions.split(",")]:
            for kind in opts.servers.split(","):  # the servers take turns at each N
                print(f"{kind}: {n} sessions ...", file=sys.stderr, flush=True)
                r = await run_level(kind, n, opts, site)
                print(f"  {r['loops_per_s']:.2f} loops/s, {r['errors']} errors, click p95 {r['tools'].get('click', {}).get('p95', 0):.0f} ms, "
                      f"first call p95 {r['first_call']['p95']:.0f} ms, {r['pss_total_mb']:.0f} MB, {r['cpu_s_per_loop']:.3f} CPU-s/loop",
                      file=sys.stderr, flush=True)
                for e in r["error_samples"]:
                    print(f"    {e}", file=sys.stderr)
                levels.append(r)
        if opts.floor_reps and "ochre" in opts.servers:
            print("navigation floor ...", file=sys.stderr, flush=True)
            floor = await navigation_floor(opts, site)
    finally:
        site_proc.terminate()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    pw_version = json.loads((Path(opts.node_bin).parent / "@playwright" / "mcp" / "package.json").read_text())["version"] \
        if (Path(opts.node_bin).parent / "@playwright" / "mcp" / "package.json").exists() else "?"
    meta = {"machine": f"{os.cpu_count()} CPUs, {psutil.virtual_memory().total / 2**30:.0f} GiB, {platform.platform()}",
            "chromium": chromium_version(opts.chromium), "commit": commit, "playwright": pw_version,
            "seconds": f"{opts.seconds:g}"}
    if opts.out:
        Path(opts.out).write_text(json.dumps({"meta": meta, "levels": levels, "floor": floor}, indent=1))
    text = markdown(levels, floor, meta)
    if opts.markdown:
        Path(opts.markdown).write_text(text)
    print(text)
    # A peer's failures are its results (in the tables); ochre's fail the run.
    return 1 if any(r["errors"] for r in levels if r["server"] == "ochre") else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
