"""What a page's shadow roots cost a click: the settle asks each shadow root of
the page for its animations on every look (a document's own list leaves theirs
out), the actionability check only those around the element.

Pages of N custom elements (`<x-item>`, a slot in a shadow root with a CSS
transition), the same pages without the shadow roots, and the button clicked
over ochre's command line (each command from spawn to exit; the click's answer
checked). Kinds take turns in each round, so that the machine's noise falls on
all of them. Prints each page's median click and the ratio shadow / light.

    python3 bench/shadow_roots_cost.py [--ochre PATH] [--rounds N] [--sizes 3000,20000]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import re
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

SHADOW = (
    "this.attachShadow({mode: 'open'}).innerHTML ="
    " '<span part=b><slot></slot></span><style>span{transition:opacity .2s}</style>';"
)


def page(n: int, shadow: bool) -> str:
    items = "\n".join(f"<x-item>item {i}</x-item>" for i in range(n))
    body = SHADOW if shadow else ""
    return f"""<!doctype html><html><head><title>{n} items</title><script>
class XItem extends HTMLElement {{ constructor() {{ super(); {body} }} }}
customElements.define('x-item', XItem);
</script></head><body>
<button onclick="document.getElementById('out').textContent = 'clicked ' + (window.k = (window.k || 0) + 1)">Change text</button>
<p id=out>none</p>
<div style="height:200px;overflow:auto">{items}</div>
</body></html>"""


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ochre", default=str(Path.home() / ".cache/ochre-ci/target/release/ochre"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--clicks", type=int, default=8)
    ap.add_argument("--sizes", default="3000,20000")
    opts = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ochre-shadow-bench-"))
    site = work / "site"
    site.mkdir()
    kinds = []
    for n in (int(s) for s in opts.sizes.split(",")):
        for shadow in (False, True):
            name = f"{n}-{'shadow' if shadow else 'light'}.html"
            (site / name).write_text(page(n, shadow))
            kinds.append(name)
    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    (work / "run").mkdir(mode=0o700)
    env = {**os.environ, "OCHRE_HOME": str(work / "data"), "OCHRE_SESSION_DIR": str(work / "run"), "OCHRE_SESSION": "bench"}

    def run(*args: str) -> tuple[float, str]:
        start = time.perf_counter()
        p = subprocess.run([opts.ochre, "--headless", *args], env=env, capture_output=True, text=True, timeout=120)
        ms = (time.perf_counter() - start) * 1000
        if p.returncode != 0:
            raise RuntimeError(f"ochre {' '.join(args)} exited {p.returncode}: {p.stderr.strip()[-500:]}")
        return ms, p.stdout

    times: dict[str, list[float]] = {k: [] for k in kinds}
    try:
        for _ in range(opts.rounds):
            for kind in kinds:
                run("open", base + kind)
                _, snap = run("snapshot")
                ref = re.search(r'button "Change text" (ax_\d+)', snap)
                assert ref, snap[:500]
                for i in range(opts.clicks):
                    ms, said = run("click", ref.group(1))
                    assert f'new text "clicked {i + 1}"' in said, said
                    times[kind].append(ms)
    finally:
        subprocess.run([opts.ochre, "session", "stop"], env=env, capture_output=True, timeout=60)
        server.shutdown()
    print(f"click from spawn to exit, medians of {opts.rounds} x {opts.clicks}:")
    for kind in kinds:
        print(f"  {kind:20} {statistics.median(times[kind]):7.1f} ms")
    for n in opts.sizes.split(","):
        light, shadow = (statistics.median(times[f"{n}-{k}.html"]) for k in ("light", "shadow"))
        print(f"  {n} shadow roots / none: {shadow / light:.2f}x (+{shadow - light:.1f} ms)")


if __name__ == "__main__":
    main()
