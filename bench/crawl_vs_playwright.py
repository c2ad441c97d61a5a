#!/usr/bin/env python3
"""Crawl throughput: ochre's `crawl` (100 pages of the many-pages site, fixtures/many-pages.py,
concurrency 4) against an agent-style loop over playwright-mcp on the same 100
URLs (browser_navigate + browser_snapshot per page), in one run, each server a
fresh process. Prints pages per second, the ratio, and peak RSS of each server's
process tree (browser included), with ochre's RSS after 20 pages and at the end
(sampled at each progress notification) to show whether memory grows per page.

Uses bench/harness.py for the fixture server, process-tree sampling and the
playwright-mcp command line. Setup:
    bash bench/setup.sh                    # venv + playwright-mcp in target/bench
    cargo build --release -p ochre --bins
Run:
    target/bench/venv/bin/python bench/crawl_vs_playwright.py
Goal: ochre >= 5x the playwright loop's pages/s, no RSS growth per page after 20.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import harness as h  # noqa: E402 - bench/harness.py, beside this file


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ochre-cmd", default=h.DEFAULT_OCHRE_CMD)
    ap.add_argument("--node-bin", default=str(h.DEFAULT_NODE_BIN))
    ap.add_argument("--chromium", default=h.DEFAULT_CHROMIUM)
    ap.add_argument("--pages", type=int, default=100)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--render", default="auto", choices=["auto", "always"],
                    help="ochre's crawl: read static pages without rendering (auto) or render all")
    opts = ap.parse_args()

    # The many-pages site is generated (fixtures/many-pages.py), beside the
    # fixture sites' robots.txt.
    sites = Path(tempfile.mkdtemp(prefix="ochre-crawl-sites-"))
    subprocess.run([sys.executable, str(h.REPO / "fixtures" / "many-pages.py"), str(sites / "many-pages")],
                   check=True, stdout=subprocess.DEVNULL)
    shutil.copy(h.REPO / "fixtures" / "sites" / "robots.txt", sites / "robots.txt")
    server, base = h.start_fixture_server(sites)
    start_url = base + "many-pages/index.html"

    async def run(command: list[str], body) -> dict:
        tree = h.ProcessTree()
        with tempfile.TemporaryDirectory(prefix="ochre-crawl-bench-") as tmp:
            async with h.mcp_stdio(command, Path(tmp)) as (session, root):
                with tree.sampling(root):
                    out = await body(session, tree, root)
            await asyncio.to_thread(tree.reap)
        out["rss_peak_mb"] = tree.peak_rss / 2**20
        out["pss_peak_mb"] = tree.peak_pss / 2**20
        return out

    async def ochre(session, tree, root):
        rss_at = {}

        async def progress(done, total, message):
            t = h.ProcessTree()
            t.sample(root, with_pss=True)
            rss_at[int(done)] = t.peak_pss / 2**20

        await session.call_tool("navigate", {"url": "about:blank"})
        t0 = time.perf_counter()
        res = await session.call_tool(
            "crawl",
            {"url": start_url, "max_pages": opts.pages, "max_depth": 10, "concurrency": opts.concurrency,
             "render": opts.render},
            read_timeout_seconds=None,
            progress_callback=progress,
        )
        secs = time.perf_counter() - t0
        data = res.structured_content or json.loads(res.content[0].text)
        pages = data["pages"]
        after20 = min((k for k in rss_at if k >= 20), default=None)
        return {
            "pages": len(pages),
            "failed": data["summary"]["failed"],
            "seconds": secs,
            "urls": [p["url"] for p in pages],
            "pss_after_20_mb": rss_at.get(after20),
            "pss_at_end_mb": rss_at.get(max(rss_at)) if rss_at else None,
            "samples": len(rss_at),
        }

    async def playwright(urls):
        async def body(session, tree, root):
            await session.call_tool("browser_navigate", {"url": "about:blank"})
            t0 = time.perf_counter()
            for u in urls:
                await session.call_tool("browser_navigate", {"url": u})
                await session.call_tool("browser_snapshot", {})
            return {"pages": len(urls), "seconds": time.perf_counter() - t0}

        workdir = Path(tempfile.mkdtemp(prefix="pw-cfg-"))
        cmd = h.PlaywrightAdapter.command(
            argparse.Namespace(node_bin=opts.node_bin, chromium=opts.chromium), workdir
        )
        return await run(cmd, body)

    async def both():
        cmd = shlex.split(opts.ochre_cmd)
        cmd[0] = str(Path(cmd[0]).resolve()) if "/" in cmd[0] else cmd[0]
        o = await run(cmd, ochre)
        p = await playwright(o["urls"])
        return o, p

    o, p = asyncio.run(both())
    server.shutdown()
    o_rate = o["pages"] / o["seconds"]
    p_rate = p["pages"] / p["seconds"]
    print("| server | pages | seconds | pages/s | peak RSS (MB) | peak PSS (MB) |")
    print("| --- | --- | --- | --- | --- | --- |")
    print(f"| ochre crawl (concurrency {opts.concurrency}, render {opts.render}) | {o['pages']} ({o['failed']} failed) | {o['seconds']:.1f} | {o_rate:.1f} | {o['rss_peak_mb']:.0f} | {o['pss_peak_mb']:.0f} |")
    print(f"| playwright-mcp navigate+snapshot loop | {p['pages']} | {p['seconds']:.1f} | {p_rate:.1f} | {p['rss_peak_mb']:.0f} | {p['pss_peak_mb']:.0f} |")
    print(f"\nochre / playwright pages per second: {o_rate / p_rate:.1f}x")
    if o["pss_after_20_mb"] is not None:
        print(
            f"ochre PSS after 20 pages: {o['pss_after_20_mb']:.0f} MB, at the end: {o['pss_at_end_mb']:.0f} MB "
            f"({o['samples']} progress samples)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
