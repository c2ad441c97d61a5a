"""What watching a tab costs: the same steps plain, with `network_capture`, traced
(`performance_trace`) and recorded (`page_video`).

One ochre server (the release build), on the benchmark's fixture pages: each round
opens every page, reads it, and on the form and interactive pages fills or clicks
(each action's effect checked in its answer), as the side-by-side benchmark does.
Rounds take turns: plain, captured (`network_capture start` before the round, `har`
after it, timed apart), captured session-wide (the same with `scope: session`), traced (`performance_trace start` before, `stop` after,
timed apart) and recorded (`page_video start` before, `stop` after, timed apart), so
that the machine's noise falls on all five.

It prints each kind's median round time, the ratios captured / plain and session /
plain (the target: at most 1.10 each), traced / plain and recorded / plain (at most 1.30 each), and the median
times to write the HAR, the trace and the video.

    target/bench/venv/bin/python bench/capture_cost.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import harness as h

PAGES = (
    ("rust/std/vec/struct.Vec.html", None),
    ("rust/book/ch08-01-vectors.html", None),
    ("httpbin/forms-post.html", ("fill", "Customer name:", "textbox", "Ada Lovelace")),
    ("interactive/index.html", ("click", "Change text", "button", "Button was clicked")),
)


async def one_round(ochre: h.OchreAdapter, base: str) -> float:
    start = time.perf_counter()
    for path, action in PAGES:
        await ochre.navigate(base + path)
        snapshot = await ochre.snapshot()
        if action:
            kind, text, role, want = action
            ref = ochre.find_ref(snapshot, text, role)
            said = await (ochre.fill(ref, want) if kind == "fill" else ochre.click(ref))
            if want not in said:
                raise RuntimeError(f"{kind} {text!r}: {said}")
    return (time.perf_counter() - start) * 1000


async def run(opts: argparse.Namespace) -> dict[str, list[float]]:
    server, base = h.start_fixture_server(opts.fixtures)
    kinds = ("plain", "captured", "session", "traced", "recorded")
    out: dict[str, list[float]] = {k: [] for k in (*kinds, "har", "session har", "trace", "video")}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            command = h.OchreAdapter.command(opts, Path(tmp))
            async with h.mcp_stdio(command, Path(tmp)) as (session, _):
                ochre = h.OchreAdapter(session)
                await one_round(ochre, base)  # warm: the pages cached, the plugins loaded
                for i in range(opts.rounds * len(kinds)):
                    kind = kinds[i % len(kinds)]
                    captured = kind in ("captured", "session")
                    scope = {"scope": "session"} if kind == "session" else {}
                    if captured:
                        await ochre.call("network_capture", {"action": "start", **scope})
                    if kind == "traced":
                        await ochre.call("performance_trace", {"action": "start"})
                    if kind == "recorded":
                        await ochre.call("page_video", {"action": "start"})
                    out[kind].append(await one_round(ochre, base))
                    if kind == "recorded":
                        start = time.perf_counter()
                        said = await ochre.call("page_video", {"action": "stop"})
                        out["video"].append((time.perf_counter() - start) * 1000)
                        if "frames" not in said:
                            raise RuntimeError(f"no video: {said}")
                    if kind == "traced":
                        start = time.perf_counter()
                        said = await ochre.call("performance_trace", {"action": "stop"})
                        out["trace"].append((time.perf_counter() - start) * 1000)
                        if "trace of" not in said and '"path"' not in said:
                            raise RuntimeError(f"no trace: {said}")
                    if captured:
                        start = time.perf_counter()
                        said = await ochre.call("network_capture", {"action": "har", **scope})
                        out["har" if kind == "captured" else "session har"].append((time.perf_counter() - start) * 1000)
                        await ochre.call("network_capture", {"action": "stop", **scope})
                        try:
                            entries = json.loads(said).get("har", {}).get("entries")
                        except ValueError:
                            entries = "HAR of 0 " not in said and "HAR of" in said
                        if not entries:
                            raise RuntimeError(f"an empty HAR: {said}")
    finally:
        server.shutdown()
    return out


def main() -> int:
    opts = h.rounds_options(7)
    out = asyncio.run(run(opts))
    med = {k: statistics.median(v) for k, v in out.items()}
    print(f"rounds: {opts.rounds} of each, {len(PAGES)} pages a round")
    print(f"plain     {med['plain']:8.1f} ms a round")
    print(f"captured  {med['captured']:8.1f} ms a round  ({med['captured'] / med['plain']:.2f}x plain; target <= 1.10)")
    print(f"session   {med['session']:8.1f} ms a round  ({med['session'] / med['plain']:.2f}x plain; target <= 1.10)")
    print(f"traced    {med['traced']:8.1f} ms a round  ({med['traced'] / med['plain']:.2f}x plain; target <= 1.30)")
    print(f"har write {med['har']:8.1f} ms (the session's: {med['session har']:.1f} ms)")
    print(f"recorded  {med['recorded']:8.1f} ms a round  ({med['recorded'] / med['plain']:.2f}x plain; target <= 1.30)")
    print(f"trace stop and write {med['trace']:8.1f} ms")
    print(f"video stop and write {med['video']:8.1f} ms")
    ok = (
        med["captured"] / med["plain"] <= 1.10
        and med["session"] / med["plain"] <= 1.10
        and med["traced"] / med["plain"] <= 1.30
        and med["recorded"] / med["plain"] <= 1.30
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
