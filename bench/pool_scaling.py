#!/usr/bin/env python3
"""Crawl throughput over a pool of browsers: ochre's `crawl` of the many-pages
site (fixtures/many-pages.py) with 1, 2 and 3 local Chromium endpoints
(`--cdp-endpoint`, each a plain Chromium with --remote-debugging-port),
concurrency scaled with them (2 per endpoint), each run a fresh ochre and fresh
browsers, in one script. Prints pages/s, the ratio to 1 endpoint, and the CPU
the run used (browsers and ochre apart, from their process trees' CPU times), so
the machine's limit is visible; then the model for a grid whose nodes have cores
to spare.

Setup:
    bash bench/setup.sh                         # venv with the MCP client, in target/bench
    cargo build --release -p ochre --bins
Run:
    target/bench/venv/bin/python bench/pool_scaling.py [--pages 120] [--render always]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import harness as h  # noqa: E402 - bench/harness.py, beside this file


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Chromium:
    """A headless Chromium with a debugging port and a temporary profile."""

    def __init__(self, exe: str) -> None:
        self.port = free_port()
        self.profile = tempfile.mkdtemp(prefix="ochre-pool-bench-")
        self.proc = subprocess.Popen(
            [exe, "--headless=new", *h.CHROMIUM_ARGS, f"--remote-debugging-port={self.port}",
             f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{self.endpoint}/json/version", timeout=1).read()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"chromium did not open port {self.port}")
                time.sleep(0.1)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cpu_seconds(self) -> float:
        return tree_cpu(h.psutil.Process(self.proc.pid))

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def tree_cpu(root) -> float:
    """User + system CPU seconds of a process and its live descendants (reaped
    children's times included)."""
    total = 0.0
    try:
        procs = [root, *root.children(recursive=True)]
    except h.psutil.NoSuchProcess:
        return 0.0
    for p in procs:
        try:
            t = p.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
        except (h.psutil.NoSuchProcess, h.psutil.AccessDenied):
            continue
    return total


async def run(n: int, opts, start_url: str) -> dict:
    browsers = [Chromium(opts.chromium) for _ in range(n)]
    try:
        args = ["--headless", "--tools-only", "core,crawl"]
        for b in browsers:
            args += ["--cdp-endpoint", b.endpoint]
        with tempfile.TemporaryDirectory(prefix="ochre-pool-bench-data-") as data:
            async with h.mcp_stdio([opts.ochre, "--data-dir", data, *args], Path(data)) as (session, server):
                # Warm: every endpoint attached, each with a tab at the site.
                await session.call_tool("crawl", {"url": start_url, "max_pages": 3 * n, "max_depth": 1,
                                                   "concurrency": 2 * n, "render": opts.render})
                cpu0 = [b.cpu_seconds() for b in browsers], tree_cpu(server)
                t0 = time.perf_counter()
                res = await session.call_tool(
                    "crawl",
                    {"url": start_url, "max_pages": opts.pages, "max_depth": 10,
                     "concurrency": 2 * n, "render": opts.render},
                    read_timeout_seconds=None,
                )
                secs = time.perf_counter() - t0
                browser_cpu = sum(b.cpu_seconds() for b in browsers) - sum(cpu0[0])
                ochre_cpu = tree_cpu(server) - cpu0[1]
                data_out = res.structured_content or json.loads(res.content[0].text)
        summary = data_out["summary"]
        return {"endpoints": n, "pages": summary["total_pages"], "failed": summary["failed"],
                "seconds": secs, "browser_cpu": browser_cpu, "ochre_cpu": ochre_cpu}
    finally:
        for b in browsers:
            b.stop()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ochre", default=str(h.REPO / "target" / "release" / "ochre"))
    ap.add_argument("--chromium", default=h.DEFAULT_CHROMIUM)
    ap.add_argument("--pages", type=int, default=120)
    ap.add_argument("--render", default="always", choices=["auto", "always"],
                    help="always (default): every page rendered, the browsers' work; auto: static reads")
    ap.add_argument("--max-endpoints", type=int, default=3)
    opts = ap.parse_args()

    sites = Path(tempfile.mkdtemp(prefix="ochre-pool-sites-"))
    subprocess.run([sys.executable, str(h.REPO / "fixtures" / "many-pages.py"), str(sites / "many-pages")],
                   check=True, stdout=subprocess.DEVNULL)
    server, base = h.start_fixture_server(sites)
    start_url = base + "many-pages/index.html"
    cores = os.cpu_count() or 1
    rows = []
    for n in range(1, opts.max_endpoints + 1):
        rows.append(asyncio.run(run(n, opts, start_url)))
    server.shutdown()
    shutil.rmtree(sites, ignore_errors=True)

    base_rate = rows[0]["pages"] / rows[0]["seconds"]
    print(f"crawl of {opts.pages} pages, render {opts.render}, {cores} cores\n")
    print("| endpoints | concurrency | pages | seconds | pages/s | vs 1 endpoint | CPU used (of the machine) | browser CPU s/page | ochre CPU s/page |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        rate = r["pages"] / r["seconds"]
        used = (r["browser_cpu"] + r["ochre_cpu"]) / r["seconds"] / cores
        print(f"| {r['endpoints']} | {2 * r['endpoints']} | {r['pages']} ({r['failed']} failed) | {r['seconds']:.1f} | "
              f"{rate:.1f} | {rate / base_rate:.2f}x | {used:.0%} | {r['browser_cpu'] / r['pages']:.3f} | "
              f"{r['ochre_cpu'] / r['pages']:.3f} |")
    # The model: a page costs b CPU-seconds in its browser and o in ochre. Here
    # both share `cores`, so pages/s <= cores / (b + o). On a grid whose nodes
    # have cores to spare, the browsers' share moves off this machine: each
    # endpoint reads at the 1-endpoint rate r1 (its concurrency kept), and ochre's
    # share stays here, so pages/s ~= min(n * r1, cores / o).
    b = rows[0]["browser_cpu"] / rows[0]["pages"]
    o = rows[0]["ochre_cpu"] / rows[0]["pages"]
    limit_here = cores / (b + o) if b + o else float("inf")
    limit_ochre = cores / o if o else float("inf")
    print(f"\nmodel: a page costs {b:.3f} CPU-s in its browser and {o:.3f} CPU-s in ochre (1-endpoint run).")
    print(f"this machine: pages/s <= {cores} cores / {b + o:.3f} = {limit_here:.1f}.")
    for n in (3, 6):
        print(f"a {n}-node grid with cores to spare: ~min({n} x {base_rate:.1f}, {cores} / {o:.3f}) = "
              f"{min(n * base_rate, limit_ochre):.1f} pages/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
