"""What a click's answer must wait for in Chromium, measured with raw CDP (no server).

On one Chromium (headless, 1280x720, as the side-by-side floor), on the benchmark's
interactive page, each round sends the three mouse events of a click on its button
(moved, pressed, released; each acknowledged) and then, in turn:

- an evaluation right after the click (what a CDP call costs then);
- a page task right after the click: `setTimeout(0)`, awaited through an evaluation
  (when the page's own follow-up work, a handler's timers and posted tasks, can run);
- the same two with no click before them (the baseline, same rounds).

It prints medians and the ratio of each after-click time to its baseline. A click
that is only sent (agent-browser) answers after the events; one whose answer says
what the click changed (ochre's settle) answers after the page's follow-up work,
which Chromium runs only once the next frame is drawn: the gap between the two is
that frame, not the server.

    target/bench/venv/bin/python bench/after_input.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import harness as h

PAGE = "interactive/index.html"
BUTTON = "Change text"


async def run(opts: argparse.Namespace) -> dict[str, list[float]]:
    server, base = h.start_fixture_server(opts.fixtures)
    out: dict[str, list[float]] = {k: [] for k in ("click", "eval_idle", "eval_after", "task_idle", "task_after")}
    try:
        async with h.RawCdpAdapter.running(opts.chromium) as (raw, _):
            await raw.navigate(base + PAGE)

            async def evaluate(js: str, wait: bool = False) -> float:
                start = time.perf_counter()
                r = await raw.cdp.send(
                    "Runtime.evaluate", {"expression": js, "awaitPromise": wait, "returnByValue": True}, raw.sid
                )
                if "exceptionDetails" in r:
                    raise RuntimeError(f"{js}: {r['exceptionDetails']}")
                return (time.perf_counter() - start) * 1000

            where = await raw.cdp.evaluate(
                raw.sid,
                "(() => { const b = [...document.querySelectorAll('button')]"
                f".find((e) => e.textContent.includes({BUTTON!r})); const r = b.getBoundingClientRect();"
                " return [r.x + r.width / 2, r.y + r.height / 2]; })()",
            )
            x, y = where

            async def click() -> float:
                start = time.perf_counter()
                for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
                    await raw.cdp.send(
                        "Input.dispatchMouseEvent",
                        {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
                        raw.sid,
                    )
                return (time.perf_counter() - start) * 1000

            task = "new Promise((r) => setTimeout(r, 0))"
            for _ in range(opts.rounds):
                out["eval_idle"].append(await evaluate("1"))
                out["task_idle"].append(await evaluate(task, True))
                await asyncio.sleep(0.05)
                out["click"].append(await click())
                out["eval_after"].append(await evaluate("1"))
                await asyncio.sleep(0.05)
                await click()
                out["task_after"].append(await evaluate(task, True))
                await asyncio.sleep(0.05)
    finally:
        server.shutdown()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=25)
    ap.add_argument("--fixtures", type=Path, default=h.BENCH_HOME / "fixtures")
    ap.add_argument("--chromium", default=h.DEFAULT_CHROMIUM)
    opts = ap.parse_args()
    if not (opts.fixtures / PAGE).is_file():
        ap.error(f"no {PAGE} under {opts.fixtures} (run `bash bench/setup.sh`)")
    got = asyncio.run(run(opts))
    med = {k: statistics.median(v) for k, v in got.items()}
    print(f"{opts.rounds} rounds; medians (min-max), ms")
    for k, v in got.items():
        print(f"  {k:<11} {med[k]:6.2f} ({min(v):.2f}-{max(v):.2f})")
    print(f"an evaluation after a click / without:  {med['eval_after'] / med['eval_idle']:.2f}x")
    print(f"a page task after a click / without:    {med['task_after'] / med['task_idle']:.2f}x")
    print(f"a page task after a click / the click:  {med['task_after'] / med['click']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
