#!/usr/bin/env python3
"""Side by side over stdio: playwright-mcp, chrome-devtools-mcp and ochre on the same pages.

Each repetition starts every selected server as a fresh process (interleaved,
so machine noise hits all alike) and drives it with the MCP Python client:

  spawn -> initialize, tools/list, first navigation (about:blank: the browser
  launch), then for each page: navigate, snapshot, and on the form and the
  interactive page one action whose effect must show in the next snapshot.

Memory is the server's process tree (browser included), sampled while it runs;
leaked_procs counts what is still alive 5 s after the session closed.
Prints a Markdown table (median and min-max over the runs) and writes every run to --out.

Setup: `bash bench/setup.sh`; usually run through `bash bench/run.sh`.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import harness as h  # noqa: E402 - bench/harness.py, beside this file (checks the venv)
import anyio  # noqa: E402
import anyio.to_thread  # noqa: E402
import mcp_types  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from pydantic import TypeAdapter  # noqa: E402

PEER_PACKAGES = {"playwright": "@playwright/mcp", "devtools": "chrome-devtools-mcp", "agent-browser": "agent-browser"}
RAW = TypeAdapter(dict[str, Any])  # tools/list as sent, unknown keys kept


@dataclass(frozen=True)
class Action:
    kind: str  # "click" or "fill"
    text: str  # the target's line in the snapshot contains this ...
    role: str  # ... and this role
    expect: str  # must show in the snapshot taken after the action (or in the URL, with in_url)
    value: str = ""  # what fill types
    in_url: bool = False  # the effect is the tab's URL (an in-page link), read after the action


@dataclass(frozen=True)
class Page:
    key: str
    path: str  # under the fixtures folder
    action: Action | None = None
    whole: bool = False  # also measure the whole snapshot (what a capped answer left behind a handle)


PAGES = (
    Page(
        "vec",
        "rust/std/vec/struct.Vec.html",
        Action("click", "dedup_by_key", "link", "#method.dedup_by_key", in_url=True),
        whole=True,
    ),
    Page("std_index", "rust/std/index.html"),
    Page("book", "rust/book/ch08-01-vectors.html"),
    Page("form", "httpbin/forms-post.html", Action("fill", "Customer name:", "textbox", "Ada Lovelace", "Ada Lovelace")),
    Page("interactive", "interactive/index.html", Action("click", "Change text", "button", "Button was clicked")),
)

T = TypeVar("T")


async def timed(call: Awaitable[T]) -> tuple[float, T]:
    """(milliseconds, result)"""
    start = time.perf_counter()
    result = await call
    return (time.perf_counter() - start) * 1000, result


def size(text: str) -> int:
    return len(text.encode("utf-8"))


# --- one run -------------------------------------------------------------------------


async def drive(adapter: h.Adapter, base_url: str, m: dict[str, Any]) -> None:
    """The script of a run, on an initialized session (none for the raw-CDP floor); records into m."""
    if adapter.session is not None:
        m["tools_list_ms"], tools = await timed(list_tools(adapter))
        m["tools"] = len(tools)
        m["tools_bytes"] = size(json.dumps(tools, separators=(",", ":"), ensure_ascii=False))
    m["first_nav_ms"], _ = await timed(adapter.open())
    for page in PAGES:
        await drive_page(adapter, base_url, page, m)
    await adapter.close()


async def list_tools(adapter: h.Adapter) -> list[dict[str, Any]]:
    """tools/list as sent, every page of it (agent-browser pages its list)."""
    tools: list[dict[str, Any]] = []
    cursor = None
    while True:
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        listing = await adapter.session.send_request(mcp_types.ListToolsRequest(params=params), RAW)
        tools += listing["tools"]
        cursor = listing.get("nextCursor")
        if not cursor:
            return tools


async def drive_page(adapter: h.Adapter, base_url: str, page: Page, m: dict[str, Any]) -> None:
    key = page.key
    m[f"{key}.nav_ms"], text = await timed(adapter.navigate(base_url + page.path))
    m[f"{key}.nav_bytes"] = size(text)
    m[f"{key}.snap_ms"], snapshot = await timed(adapter.snapshot())
    m[f"{key}.snap_bytes"] = size(snapshot)
    m[f"{key}.refs"] = len(adapter.nodes(snapshot))
    acts = await adapter.acting_snapshot()
    if acts is not None:
        m[f"{key}.acts_bytes"] = size(acts)
    if page.whole:
        m[f"{key}.whole_ms"], whole = await timed(adapter.whole_snapshot())
        m[f"{key}.whole_bytes"] = size(whole)
    action = page.action
    if action is None:
        return
    ref = adapter.find_ref(snapshot, action.text, action.role)
    call = adapter.click(ref) if action.kind == "click" else adapter.fill(ref, action.value)
    m[f"{key}.{action.kind}_ms"], text = await timed(call)
    m[f"{key}.{action.kind}_bytes"] = size(text)
    after = await adapter.url() if action.in_url else await adapter.page_text()
    m[f"{key}.{action.kind}_ok"] = action.expect in after


async def run_once(cls: type[h.Adapter], opts: argparse.Namespace, base_url: str) -> tuple[dict[str, Any], str]:
    """One fresh server process through the script; returns (metrics, the server's name and version)."""
    if cls is h.RawCdpAdapter:
        return await run_once_raw(opts, base_url)
    m: dict[str, Any] = {}
    tree = h.ProcessTree()
    with tempfile.TemporaryDirectory(prefix=f"ochre-bench-{cls.name}-") as tmp:
        workdir = Path(tmp)
        command = cls.command(opts, workdir)
        env = cls.environment(opts, workdir)
        params = StdioServerParameters(command=command[0], args=command[1:], cwd=workdir, env=env)
        errlog_path = workdir / "server-stderr.log"
        before = {p.pid for p in h.psutil.Process().children()}
        try:
            with errlog_path.open("w") as errlog:
                start = time.perf_counter()
                async with (
                    stdio_client(params, errlog=errlog) as (read, write),
                    ClientSession(read, write, read_timeout_seconds=opts.timeout) as session,
                ):
                    init = await session.initialize()
                    m["init_ms"] = (time.perf_counter() - start) * 1000
                    with tree.sampling(h.spawned_server(before), also=lambda: cls.detached(workdir)):
                        await drive(cls(session), base_url, m)
        except Exception as exc:
            raise RuntimeError(failure(exc, errlog_path)) from exc
        finally:
            leaked = await anyio.to_thread.run_sync(tree.reap)
    m["rss_peak_mb"] = tree.peak_rss / 2**20
    m["pss_peak_mb"] = tree.peak_pss / 2**20
    m["leaked_procs"] = leaked
    return m, f"{init.server_info.name} {init.server_info.version}"


async def run_once_raw(opts: argparse.Namespace, base_url: str) -> tuple[dict[str, Any], str]:
    """The floor through the same script: a fresh Chromium driven by the benchmark's own CDP calls."""
    m: dict[str, Any] = {}
    tree = h.ProcessTree()
    start = time.perf_counter()
    async with h.RawCdpAdapter.running(opts.chromium) as (adapter, browser):
        m["init_ms"] = (time.perf_counter() - start) * 1000  # the browser's launch: no server here
        with tree.sampling(browser):
            await drive(adapter, base_url, m)
    m["rss_peak_mb"] = tree.peak_rss / 2**20
    m["pss_peak_mb"] = tree.peak_pss / 2**20
    m["leaked_procs"] = await anyio.to_thread.run_sync(tree.reap)
    return m, "raw CDP (this benchmark's own calls)"


async def navigation_floor(opts: argparse.Namespace, base_url: str) -> list[dict[str, Any]]:
    """ochre's navigate against the floor on one browser: a Chromium of the benchmark's own, ochre
    attached to it (`--cdp-endpoint`), raw CDP in a tab of its own; on every page, alternating, each
    ochre navigation followed by a read_page (which pays the settle it owes); the first of each
    is a warm-up. Also an MCP call that does nothing in the browser: what any call costs."""
    rows: list[dict[str, Any]] = []
    async with h.RawCdpAdapter.running(opts.chromium) as (raw, _):
        port = urllib.parse.urlsplit(raw.ws_url).port
        with tempfile.TemporaryDirectory(prefix="ochre-bench-floor-") as tmp:
            command = h.OchreAdapter.command(opts, Path(tmp))
            command += ["--cdp-endpoint", f"http://127.0.0.1:{port}"]
            params = StdioServerParameters(command=command[0], args=command[1:], cwd=tmp)
            with (Path(tmp) / "server-stderr.log").open("w") as errlog:
                async with (
                    stdio_client(params, errlog=errlog) as (read, write),
                    ClientSession(read, write, read_timeout_seconds=opts.timeout) as session,
                ):
                    await session.initialize()
                    ochre = h.OchreAdapter(session)
                    await ochre.open()

                    async def raw_navigate(url: str) -> float:
                        return (await timed(raw.navigate(url)))[0]

                    pages = [(page.key, f"{base_url}{page.path}") for page in PAGES]
                    rows = await h.navigation_floor_rows(raw_navigate, ochre, pages, opts.floor_reps)
    return rows


def floor_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| page | raw CDP navigate | ochre navigate | ochre − raw | paired differences: median (range) | an MCP call doing nothing |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['page']} | {fmt(r['raw_cdp_ms'])} | {fmt(r['ochre_ms'])} | {r['over_ms']:+.1f} ms "
            f"| {r['paired_ms']:+.1f} ({r['spread_ms'][0]:+.0f} to {r['spread_ms'][1]:+.0f}) ms | {fmt(r['mcp_call_ms'])} |"
        )
    return "\n".join(lines)


def failure(exc: BaseException, errlog: Path) -> str:
    """The exception (unpacking exception groups) and the last lines the server wrote to stderr."""

    def describe(e: BaseException) -> str:
        if isinstance(e, BaseExceptionGroup):
            return "; ".join(describe(inner) for inner in e.exceptions)
        return f"{type(e).__name__}: {e}"

    tail = errlog.read_text(errors="replace").splitlines()[-15:] if errlog.exists() else []
    return describe(exc) + ("\n  server stderr:\n    " + "\n    ".join(tail) if tail else "")


async def bench(opts: argparse.Namespace) -> dict[str, Any]:
    """All repetitions, interleaved across the profiles."""
    results: dict[str, dict[str, Any]] = {
        name: {"server": None, "runs": [], "errors": []} for name in opts.profiles
    }
    server, base_url = h.start_fixture_server(opts.fixtures)
    try:
        for rep in range(1, opts.reps + 1):
            for name, result in results.items():
                started = time.perf_counter()
                try:
                    metrics, result["server"] = await run_once(h.ADAPTERS.get(name, h.RawCdpAdapter), opts, base_url)
                    result["runs"].append(metrics)
                    status = "ok" if all(v for k, v in metrics.items() if k.endswith("_ok")) else "ACTION NOT VERIFIED"
                except (RuntimeError, h.ToolError, LookupError) as exc:
                    result["errors"].append(f"rep {rep}: {exc}")
                    status = f"FAILED: {exc}"
                took = time.perf_counter() - started
                print(f"rep {rep}/{opts.reps} {name:<10} {took:5.1f} s  {status}", file=sys.stderr, flush=True)
    finally:
        server.shutdown()
    return results


# --- report ----------------------------------------------------------------------------


def summarize(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    keys = list(dict.fromkeys(k for run in runs for k in run))
    out: dict[str, dict[str, Any]] = {}
    for key in keys:
        values = [run[key] for run in runs if key in run]
        if all(isinstance(v, bool) for v in values):
            out[key] = {"passed": sum(values), "n": len(values)}
        else:
            out[key] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
    return out


def fmt(x: float) -> str:
    if float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.1f}"


def cell(stats: dict[str, Any] | None) -> str:
    if stats is None:
        return "-"
    if "passed" in stats:
        return f"{stats['passed']}/{stats['n']}"
    median, low, high = fmt(stats["median"]), fmt(stats["min"]), fmt(stats["max"])
    return median if low == high else f"{median} ({low}-{high})"


def ratio(stats: dict[str, Any] | None, base: dict[str, Any] | None) -> str:
    if not stats or not base or "median" not in stats or "median" not in base or not base["median"]:
        return "-"
    return f"{stats['median'] / base['median']:.2f}x"


def over(stats: dict[str, Any] | None, floor: dict[str, Any] | None) -> str:
    """ochre's median minus the floor's, in ms."""
    if not stats or not floor or "median" not in stats or "median" not in floor:
        return "-"
    return f"{stats['median'] - floor['median']:+.1f} ms"


def table(results: dict[str, dict[str, Any]]) -> str:
    names = list(results)
    summaries = {name: summarize(r["runs"]) for name, r in results.items()}
    bases = [b for b in ("playwright", "devtools", "agent-browser") if b in names and "ochre" in names]
    floor = "cdp" in names and "ochre" in names
    header = ["metric", *names, *(f"ochre/{b}" for b in bases), *(["ochre − cdp"] if floor else [])]
    rows = [["runs ok", *(f"{len(r['runs'])}/{len(r['runs']) + len(r['errors'])}" for r in results.values())]]
    rows[0] += [""] * (len(header) - len(rows[0]))
    for key in dict.fromkeys(k for s in summaries.values() for k in s):
        stats = {name: summaries[name].get(key) for name in names}
        row = [key, *(cell(stats[n]) for n in names), *(ratio(stats["ochre"], stats[b]) for b in bases)]
        if floor:
            row.append(over(stats["ochre"], stats["cdp"]) if key.endswith("_ms") and key != "init_ms" else "")
        rows.append(row)
    lines = [header, ["---", *("---:" for _ in header[1:])], *rows]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


def output_of(command: list[str], cwd: Path | None = None) -> str:
    """First line of a command's stdout, or '?' when it cannot run."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    lines = done.stdout.strip().splitlines()
    return lines[0] if done.returncode == 0 and lines else "?"


def peer_version(opts: argparse.Namespace, package: str) -> str:
    manifest = Path(opts.node_bin).parent / package / "package.json"
    try:
        return f"{package} {json.loads(manifest.read_text())['version']}"
    except (OSError, ValueError, KeyError):
        return f"{package} ?"


def mem_total_gib() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 2**20
    return 0.0


def environment(opts: argparse.Namespace) -> dict[str, Any]:
    commit = output_of(["git", "rev-parse", "--short", "HEAD"], cwd=h.REPO)
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=h.REPO, capture_output=True).returncode != 0
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "ochre_commit": commit + (" (with uncommitted changes)" if dirty else ""),
        "chromium": output_of([opts.chromium, "--version"]),
        "peers": [peer_version(opts, PEER_PACKAGES[p]) for p in opts.profiles if p in PEER_PACKAGES],
        "python": platform.python_version(),
        "mcp": importlib.metadata.version("mcp"),
        "cpus": os.cpu_count(),
        "memory_gib": round(mem_total_gib(), 1),
        "reps": opts.reps,
    }


def header(env: dict[str, Any], results: dict[str, dict[str, Any]]) -> str:
    servers = ", ".join(f"{name}: {r['server'] or '?'}" for name, r in results.items())
    return "\n".join(
        [
            f"- date: {env['date']}; ochre commit {env['ochre_commit']}",
            f"- {env['chromium']}; peers: {', '.join(env['peers']) or 'none'}",
            f"- servers (initialize): {servers}",
            f"- Python {env['python']}, mcp {env['mcp']}; {env['cpus']} CPUs, {env['memory_gib']} GiB memory",
            f"- runs per server: {env['reps']}, interleaved; cells: median (min-max)",
        ]
    )


# --- command line -------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5, help="fresh processes per server (default: %(default)s)")
    ap.add_argument("--profiles", default=",".join(h.PROFILES), help="comma-separated (default: %(default)s)")
    ap.add_argument("--out", type=Path, help="write every run as JSON here")
    ap.add_argument("--markdown", type=Path, help="also write the header and table here")
    ap.add_argument("--fixtures", type=Path, default=h.BENCH_HOME / "fixtures")
    ap.add_argument("--node-bin", default=str(h.DEFAULT_NODE_BIN), help="holds playwright-mcp, chrome-devtools-mcp (agent-browser's package beside it)")
    ap.add_argument("--chromium", default=h.DEFAULT_CHROMIUM)
    ap.add_argument("--ochre-cmd", default=h.DEFAULT_OCHRE_CMD)
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds allowed per MCP request")
    ap.add_argument(
        "--floor-reps",
        type=int,
        default=15,
        help="navigations per page of the one-browser navigation floor, after a warm-up (0: none; default %(default)s)",
    )
    opts = ap.parse_args(argv)
    opts.profiles = [p.strip() for p in opts.profiles.split(",") if p.strip()]
    check_prerequisites(ap, opts)
    return opts


def check_prerequisites(ap: argparse.ArgumentParser, opts: argparse.Namespace) -> None:
    unknown = [p for p in opts.profiles if p not in h.PROFILES]
    if unknown:
        ap.error(f"unknown profile(s) {unknown}; known: {list(h.PROFILES)}")
    missing = [p.path for p in PAGES if not (opts.fixtures / p.path).is_file()]
    if missing:
        ap.error(f"fixture pages missing under {opts.fixtures}: {missing} (run `bash bench/setup.sh`)")
    if not Path(opts.chromium).is_file():
        ap.error(f"no browser at {opts.chromium} (apt-get install -y chromium, or --chromium PATH)")
    for name in (p for p in opts.profiles if p in h.ADAPTERS):
        with tempfile.TemporaryDirectory() as tmp:
            program = h.ADAPTERS[name].command(opts, Path(tmp))[0]
        if not Path(program).is_file():
            hint = "cargo build --release -p ochre --bins" if name == "ochre" else "bash bench/setup.sh"
            ap.error(f"{name}: {program} not found ({hint})")


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    env = environment(opts)
    results = anyio.run(bench, opts)
    report = header(env, results) + "\n\n" + table(results) + "\n"
    floor: list[dict[str, Any]] = []
    if opts.floor_reps > 0 and "ochre" in opts.profiles:
        server, base_url = h.start_fixture_server(opts.fixtures)
        try:
            floor = anyio.run(navigation_floor, opts, base_url)
        finally:
            server.shutdown()
        report += (
            f"\n### Navigation floor: one browser, ochre attached, {opts.floor_reps} navigations a page, medians\n\n"
            + floor_table(floor)
            + "\n"
        )
    print(report)
    for name, result in results.items():
        for error in result["errors"]:
            print(f"{name} {error}", file=sys.stderr)
    if opts.out:
        opts.out.parent.mkdir(parents=True, exist_ok=True)
        opts.out.write_text(json.dumps({"environment": env, "results": results, "floor": floor}, indent=1) + "\n")
    if opts.markdown:
        opts.markdown.parent.mkdir(parents=True, exist_ok=True)
        opts.markdown.write_text(report)
    verified = all(v for r in results.values() for run in r["runs"] for k, v in run.items() if k.endswith("_ok"))
    return 0 if verified and not any(r["errors"] for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
