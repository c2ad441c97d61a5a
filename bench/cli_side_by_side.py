#!/usr/bin/env python3
"""The command line side by side: ochre's CLI and agent-browser's CLI, command by command.

A coding agent runs one process per step: the time that counts is from the
process's start to its exit, and the bytes are what it printed. Each
repetition gives each CLI a session of its own (its daemon and browser
started by the first command, `open about:blank`, timed apart as
`start_ms`), then on every bench page: `open` the page, `snapshot` (the
interactive view: ochre's default, agent-browser's `snapshot -i`), and where
the page has one, the action (click or fill by the snapshot's ref) whose
effect must show after it (the next snapshot, or the URL). The CLIs take
turns, so noise hits both alike.

ochre runs twice: as it answers by default (an action's answer says what it
changed: the new URL, the new text, the value read back) and with `-q` (an
action that succeeded prints nothing: its exit code says it was done and its
effect checked), which carries what agent-browser's `✓ Done` carries. Beside
each action, `*_known_*` counts until the agent knows the action's effect:
the action alone when its answer shows the expected effect, else the action
and the read that shows it (the URL, the page's text or the snapshot).

Beside them, ochre's no-op: `ochre tabs` (a call that does nothing in the
browser), its process start to exit against the same call on a connection the
benchmark opens to the daemon itself (the daemon's own work, its handshake
included): the difference is what the command's process adds to every call.

Setup: `bash bench/setup.sh`. Run:
    target/bench/venv/bin/python bench/cli_side_by_side.py --reps 10 --ochre target/release/ochre
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.dont_write_bytecode = True
import harness as h  # noqa: E402 - bench/harness.py: the fixture server, Chromium flags
from side_by_side import PAGES  # noqa: E402 - the same pages and actions


@dataclass
class Cli:
    name: str
    kind: str  # "ochre" or "agent-browser": its commands' spelling
    ref_re: re.Pattern[str]
    env: dict[str, str]
    argv: list[str]
    workdir: Path

    def run(self, *args: str) -> tuple[float, str]:
        """(ms from spawn to exit, stdout); a failure raises with its stderr."""
        start = time.perf_counter()
        p = subprocess.run([*self.argv, *args], env=self.env, cwd=self.workdir, capture_output=True, text=True, timeout=180)
        ms = (time.perf_counter() - start) * 1000
        if p.returncode != 0:
            raise RuntimeError(f"{self.name} {' '.join(args)} exited {p.returncode}: {p.stderr.strip()[-800:]}")
        return ms, p.stdout

    def find_ref(self, snapshot: str, text: str, role: str) -> str:
        role_re = re.compile(rf"\b{re.escape(role)}\b")
        for line in snapshot.splitlines():
            found = self.ref_re.search(line)
            if found and text in line and role_re.search(line):
                return found.group(1)
        raise LookupError(f"{self.name}: no {role} line with a ref contains {text!r}")


def ochre_cli(opts: argparse.Namespace, workdir: Path, quiet: bool = False) -> Cli:
    env = {**os.environ, "OCHRE_HOME": str(workdir / "data"), "OCHRE_SESSION_DIR": str(workdir / "run"), "OCHRE_SESSION": "bench"}
    (workdir / "run").mkdir(mode=0o700)
    argv = [opts.ochre, *(["-q"] if quiet else []), "--headless", "--chrome-path", opts.chromium]
    return Cli("ochre -q" if quiet else "ochre", "ochre", re.compile(r"\b(ax_\d+)\b"), env, argv, workdir)


def ochre_quiet_cli(opts: argparse.Namespace, workdir: Path) -> Cli:
    return ochre_cli(opts, workdir, quiet=True)


def agent_browser_cli(opts: argparse.Namespace, workdir: Path) -> Cli:
    env = {
        **os.environ,
        "HOME": str(workdir),
        "AGENT_BROWSER_EXECUTABLE_PATH": opts.chromium,
        "AGENT_BROWSER_ARGS": ",".join(h.CHROMIUM_ARGS),
    }
    binary = str(h.AgentBrowserAdapter.binary(opts.node_bin))
    return Cli("agent-browser", "agent-browser", re.compile(r"\[ref=([^\]\s]+)\]"), env, [binary, "--session", "bench"], workdir)


SNAPSHOT = {"ochre": ["snapshot"], "agent-browser": ["snapshot", "-i"]}
URL = {"ochre": ["get", "url"], "agent-browser": ["get", "url"]}
TEXT = {"ochre": ["get", "text"], "agent-browser": ["get", "text", "body"]}


def one_run(cli: Cli, base_url: str) -> dict[str, Any]:
    m: dict[str, Any] = {}
    m["start_ms"], _ = cli.run("open", "about:blank")
    for page in PAGES:
        p: dict[str, Any] = {}
        p["open_ms"], out = cli.run("open", f"{base_url}{page.path}")
        p["open_bytes"] = len(out.encode())
        p["snapshot_ms"], snap = cli.run(*SNAPSHOT[cli.kind])
        p["snapshot_bytes"] = len(snap.encode())
        a = page.action
        if a is not None:
            ref = cli.find_ref(snap, a.text, a.role)
            ref = ref if cli.kind == "ochre" else f"@{ref}"
            args = ["click", ref] if a.kind == "click" else ["fill", ref, a.value]
            ms, out = cli.run(*args)
            p[f"{a.kind}_ms"], p[f"{a.kind}_bytes"] = ms, len(out.encode())
            if a.in_url:
                read_ms, after = cli.run(*URL[cli.kind])
            elif a.kind == "fill":
                read_ms, after = cli.run(*SNAPSHOT[cli.kind])  # the field's value shows in both
            else:
                read_ms, after = cli.run(*TEXT[cli.kind])  # the interactive view has no prose
            p[f"{a.kind}_ok"] = a.expect in after
            shown = a.expect in out
            p[f"{a.kind}_known_ms"] = ms if shown else ms + read_ms
            p[f"{a.kind}_known_bytes"] = len(out.encode()) + (0 if shown else len(after.encode()))
        m[page.key] = p
    return m


def close(cli: Cli) -> None:
    args = ["session", "stop"] if cli.kind == "ochre" else ["close"]
    subprocess.run([*cli.argv, *args], env=cli.env, cwd=cli.workdir, capture_output=True, timeout=60)


class Daemon:
    """An MCP connection to ochre's session daemon, opened by the benchmark itself (no process
    started): the daemon's own time for a call, its handshake included."""

    def __init__(self, sock_path: Path) -> None:
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(str(sock_path))
        self.f = self.s.makefile("rwb")
        self.id = 0
        self.send({"method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
        self.reply()
        self.f.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.f.flush()

    def send(self, msg: dict[str, Any]) -> None:
        self.id += 1
        self.f.write(json.dumps({"jsonrpc": "2.0", "id": self.id, **msg}).encode() + b"\n")
        self.f.flush()

    def reply(self) -> dict[str, Any]:
        while True:
            msg = json.loads(self.f.readline())
            if msg.get("id") == self.id:
                return msg

    def call_ms(self, tool: str) -> float:
        start = time.perf_counter()
        self.send({"method": "tools/call", "params": {"name": tool, "arguments": {}}})
        self.reply()
        return (time.perf_counter() - start) * 1000

    def close(self) -> None:
        self.f.close()  # the file holds the socket open until it is closed too
        self.s.close()


def noop_rows(cli: Cli, n: int) -> dict[str, float]:
    """`ochre tabs` from spawn to exit, against tabs_context on a connection of the benchmark's own
    (connect, handshake, call, close), alternating."""
    cli_ms, held_ms = [], []
    sock = Path(cli.env["OCHRE_SESSION_DIR"]) / "bench.sock"
    for _ in range(n):
        cli_ms.append(cli.run("tabs")[0])
        start = time.perf_counter()
        daemon = Daemon(sock)
        daemon.call_ms("tabs_context")
        daemon.close()
        held_ms.append((time.perf_counter() - start) * 1000)
    return {"cli_ms": statistics.median(cli_ms), "held_ms": statistics.median(held_ms), "over_ms": statistics.median(c - d for c, d in zip(cli_ms, held_ms))}


METRICS = (
    "open_ms",
    "open_bytes",
    "snapshot_ms",
    "snapshot_bytes",
    *(f"{kind}{m}" for kind in ("click", "fill") for m in ("_ms", "_bytes", "_known_ms", "_known_bytes")),
)


def fmt(values: list[float]) -> str:
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.0f}"
    return f"{med:.0f} ({min(values):.0f}-{max(values):.0f})"


def table(runs: dict[str, list[dict[str, Any]]]) -> str:
    """One row a metric: agent-browser, then each ochre and its ratio to agent-browser."""
    ours = [name for name in runs if name != "agent-browser"]
    head = " | ".join(f"{name} | {name} / agent-browser" for name in ours)
    lines = [f"| metric | agent-browser | {head} |", "| --- | ---: |" + " ---: | ---: |" * len(ours)]
    keys = [("start_ms", None)] + [(m, p.key) for p in PAGES for m in METRICS]
    for metric, page in keys:
        vals = {}
        for name, rs in runs.items():
            got = [r[page][metric] if page else r[metric] for r in rs if (r.get(page, {}) if page else r).get(metric) is not None]
            if got:
                vals[name] = got
        if "agent-browser" not in vals or not any(name in vals for name in ours):
            continue
        base = max(statistics.median(vals["agent-browser"]), 1e-9)
        cells = []
        for name in ours:
            if name in vals:
                cells.append(f"{fmt(vals[name])} | {statistics.median(vals[name]) / base:.2f}x")
            else:
                cells.append("|")
        label = f"{page}.{metric}" if page else metric
        lines.append(f"| {label} | {fmt(vals['agent-browser'])} | {' | '.join(cells)} |")
    oks = []
    for name, rs in runs.items():
        for p in PAGES:
            if p.action:
                key = f"{p.action.kind}_ok"
                oks.append(f"{name} {p.key}.{key}: {sum(bool(r[p.key].get(key)) for r in rs)}/{len(rs)}")
    return "\n".join(lines) + "\n\n" + "; ".join(oks)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--ochre", default=str(h.REPO / "target" / "release" / "ochre"))
    ap.add_argument("--chromium", default=h.DEFAULT_CHROMIUM)
    ap.add_argument("--node-bin", default=str(h.DEFAULT_NODE_BIN))
    ap.add_argument("--fixtures", type=Path, default=h.BENCH_HOME / "fixtures")
    ap.add_argument("--noop-reps", type=int, default=30)
    ap.add_argument("--markdown", type=Path)
    ap.add_argument("--out", type=Path)
    opts = ap.parse_args()
    _, base_url = h.start_fixture_server(opts.fixtures)
    runs: dict[str, list[dict[str, Any]]] = {"agent-browser": [], "ochre": [], "ochre -q": []}
    noop: list[dict[str, float]] = []
    for rep in range(opts.reps):
        for make in (agent_browser_cli, ochre_cli, ochre_quiet_cli):
            with tempfile.TemporaryDirectory(prefix="ochre-cli-bench-") as tmp:
                cli = make(opts, Path(tmp))
                try:
                    runs[cli.name].append(one_run(cli, base_url))
                    if cli.name == "ochre":
                        noop.append(noop_rows(cli, opts.noop_reps))
                finally:
                    close(cli)
        print(f"rep {rep + 1}/{opts.reps} done", file=sys.stderr)
    n = {k: statistics.median(r[k] for r in noop) for k in ("cli_ms", "held_ms", "over_ms")}
    report = (
        f"# The command line side by side: ochre and agent-browser\n\n"
        f"{datetime.now(timezone.utc):%Y-%m-%d}, {opts.reps} runs, medians (min-max); {platform.machine()}, "
        f"{os.cpu_count()} cores; ms are from the command's spawn to its exit, bytes what it printed. "
        f"`ochre -q`: ochre with `--quiet` (an action that succeeded prints nothing; its exit code says so). "
        f"`*_known_*`: until the agent knows the action's effect (the action alone when its answer shows it, "
        f"else the action and the read that shows it).\n\n"
        f"{table(runs)}\n\n"
        f"ochre's no-op (`ochre tabs`): {n['cli_ms']:.1f} ms from spawn to exit, {n['held_ms']:.1f} ms for the same call "
        f"on a connection the benchmark opens to the daemon (handshake included): the command's process adds "
        f"{n['over_ms']:.1f} ms (median of the paired "
        f"differences, {opts.noop_reps} pairs a run).\n"
    )
    print(report)
    if opts.markdown:
        opts.markdown.write_text(report)
    if opts.out:
        opts.out.write_text(json.dumps({"runs": runs, "noop": noop}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
