#!/usr/bin/env python3
"""Installs the third-party software the tests use (pinned in pins.toml beside this
file) into a cache outside the clone, once per machine.

    install.py ensure NAME...   install what is missing or broken; print each path
    install.py all              ensure every entry, several at a time (CI starts
                                this in the background while it compiles)
    install.py path NAME        the path an entry has (installed or not)
    install.py list             the entries, with their pins

An npm entry's path is its `node_modules` dir; a PyPI entry's is its virtualenv's
`python`. The cache is $OCHRE_TEST_CACHE, else $XDG_CACHE_HOME/ochre-tests, else
~/.cache/ochre-tests. An entry lives in `<kind>-<name>-<key>`, the key a hash of
its pins and of the Node.js or Python that installs it, so another pin (or another
interpreter) is another entry and clones at other commits can share the cache.

An entry is trusted only whole: it is installed in place under an exclusive lock
(flock on `<entry>.lock`, so tests running in parallel and the background run wait
for one another, each wait bounded), its marker written last, and at every use the
marker's key and each pinned package's installed version are checked again; a
missing, partial or corrupt entry is removed and installed anew.
"""

import concurrent.futures
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
PINS = HERE / "pins.toml"
MARKER = ".ochre-complete"
# How long a caller waits for another process installing the same entry.
WAIT_SECS = int(os.environ.get("OCHRE_TEST_CACHE_WAIT", "1500"))


class Failure(Exception):
    pass


def cache_root() -> Path:
    if os.environ.get("OCHRE_TEST_CACHE"):
        return Path(os.environ["OCHRE_TEST_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ochre-tests"


def load_pins() -> dict:
    with open(PINS, "rb") as f:
        pins = tomllib.load(f)
    entries = {}
    for kind in ("npm", "pypi"):
        for name, spec in pins.get(kind, {}).items():
            packages = spec.get("packages")
            if not isinstance(packages, list) or not packages or not all(isinstance(p, str) for p in packages):
                raise Failure(f"{PINS}: [{kind}.{name}] needs packages = [\"...\"]")
            if name in entries:
                raise Failure(f"{PINS}: the name {name} is used twice")
            entries[name] = (kind, packages)
    unknown = set(pins) - {"npm", "pypi"}
    if unknown:
        raise Failure(f"{PINS}: unknown sections {sorted(unknown)} (npm and pypi are known)")
    return entries


def run(cmd, what: str, **kw) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, **kw)
    except FileNotFoundError as e:
        raise Failure(f"{what}: {e}") from None
    if out.returncode != 0:
        raise Failure(f"{what} failed (exit {out.returncode}):\n{out.stderr.strip() or out.stdout.strip()}")
    return out.stdout


_tool_versions: dict = {}


def tool_version(kind: str) -> str:
    """What installs an entry, as part of its key: a venv belongs to one Python."""
    if kind not in _tool_versions:
        if kind == "npm":
            _tool_versions[kind] = run(["node", "--version"], "node --version (install Node.js and npm)").strip()
        else:
            _tool_versions[kind] = run(
                ["python3", "-c", "import sys; print(sys.version)"], "python3 --version"
            ).strip()
    return _tool_versions[kind]


def entry_dir(name: str, kind: str, packages: list) -> tuple[Path, str]:
    key = hashlib.sha256(
        json.dumps([kind, name, packages, tool_version(kind)]).encode()
    ).hexdigest()[:16]
    return cache_root() / f"{kind}-{name}-{key}", key


def result_path(kind: str, entry: Path) -> Path:
    return entry / "node_modules" if kind == "npm" else entry / "venv" / "bin" / "python"


def split_pin(kind: str, pin: str) -> tuple[str, str]:
    if kind == "npm":
        at = pin.rfind("@")
        if at <= 0:
            raise Failure(f"npm pin {pin!r} has no @version")
        return pin[:at], pin[at + 1 :]
    if "==" not in pin:
        raise Failure(f"PyPI pin {pin!r} has no ==version")
    name, version = pin.split("==", 1)
    return name, version


def check(kind: str, entry: Path, key: str, packages: list, marked: bool = True) -> str | None:
    """None if the entry is whole (`marked`: its marker says so) and holds the
    pinned versions, else what is wrong."""
    if marked:
        try:
            said = json.loads((entry / MARKER).read_text())
        except (OSError, ValueError):
            return "no completion marker (never finished)"
        if said.get("key") != key or said.get("packages") != packages:
            return "its marker is for other pins"
    if kind == "npm":
        for pin in packages:
            pkg, version = split_pin(kind, pin)
            try:
                found = json.loads((entry / "node_modules" / pkg / "package.json").read_text()).get("version")
            except (OSError, ValueError):
                return f"{pkg} is missing"
            if found != version:
                return f"{pkg} is {found}, pinned {version}"
        return None
    python = result_path(kind, entry)
    probe = (
        "import importlib.metadata as m, json, sys\n"
        "out = {}\n"
        "for n in sys.argv[1:]:\n"
        "    try: out[n] = m.version(n)\n"
        "    except m.PackageNotFoundError: out[n] = None\n"
        "print(json.dumps(out))\n"
    )
    names = [split_pin(kind, p)[0] for p in packages]
    try:
        found = json.loads(run([str(python), "-c", probe, *names], f"{python} (the venv's Python)"))
    except (Failure, ValueError) as e:
        return f"its Python does not run: {e}"
    for pin in packages:
        pkg, version = split_pin(kind, pin)
        if found.get(pkg) != version:
            return f"{pkg} is {found.get(pkg)}, pinned {version}"
    return None


def remove(entry: Path) -> None:
    """Removes what an earlier, unfinished install left (a process of which may
    still be writing there for a moment)."""
    for _ in range(50):
        shutil.rmtree(entry, ignore_errors=True)
        if not entry.exists():
            return
        time.sleep(0.2)
    raise Failure(f"cannot remove the unfinished entry {entry}")


def install(kind: str, entry: Path, packages: list) -> None:
    remove(entry)
    entry.mkdir(parents=True)
    if kind == "npm":
        (entry / "package.json").write_text('{"private": true}\n')
        run(
            ["npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(entry), *packages],
            f"npm install {' '.join(packages)} (install Node.js and npm)",
        )
    else:
        venv = entry / "venv"
        run(["python3", "-m", "venv", str(venv)], "python3 -m venv (install python3-venv)")
        run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", *packages],
            f"pip install {' '.join(packages)}",
        )


def lock(path: Path, what: str):
    """An exclusive flock on `path`, waited for at most WAIT_SECS."""
    path.parent.mkdir(parents=True, exist_ok=True)
    f = open(path, "a+")
    deadline = time.monotonic() + WAIT_SECS
    said = False
    while True:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return f
        except BlockingIOError:
            if time.monotonic() > deadline:
                f.close()
                raise Failure(
                    f"waited {WAIT_SECS} s for another process installing {what} ({path} is locked); "
                    "set OCHRE_TEST_CACHE_WAIT to wait longer"
                ) from None
            if not said:
                print(f"install.py: waiting for another process installing {what}", file=sys.stderr)
                said = True
            time.sleep(0.2)


def ensure(name: str, entries: dict) -> Path:
    if name not in entries:
        raise Failure(f"no entry {name!r} in {PINS} (known: {', '.join(sorted(entries))})")
    kind, packages = entries[name]
    entry, key = entry_dir(name, kind, packages)
    with lock(entry.with_name(entry.name + ".lock"), f"{kind} {name}"):
        wrong = check(kind, entry, key, packages)
        if wrong is not None:
            if entry.exists():
                print(f"install.py: {kind} {name}: {wrong}: installing anew", file=sys.stderr)
            start = time.monotonic()
            install(kind, entry, packages)
            wrong = check(kind, entry, key, packages, marked=False)
            if wrong is not None:
                raise Failure(f"{kind} {name} installed, but {wrong}")
            tmp = entry / (MARKER + ".tmp")
            tmp.write_text(json.dumps({"key": key, "packages": packages}))
            os.replace(tmp, entry / MARKER)
            print(f"install.py: {kind} {name} installed in {time.monotonic() - start:.0f} s", file=sys.stderr)
    return result_path(kind, entry)


def main(argv: list) -> int:
    if not argv or argv[0] not in ("ensure", "all", "path", "list"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        entries = load_pins()
        cmd, names = argv[0], argv[1:]
        if cmd == "list":
            for name, (kind, packages) in sorted(entries.items()):
                print(f"{kind} {name}: {' '.join(packages)}")
        elif cmd == "path":
            for name in names:
                if name not in entries:
                    raise Failure(f"no entry {name!r} in {PINS}")
                kind, packages = entries[name]
                print(result_path(kind, entry_dir(name, kind, packages)[0]))
        elif cmd == "ensure":
            if not names:
                raise Failure("ensure takes one or more names")
            for name in names:
                print(ensure(name, entries))
        else:
            start = time.monotonic()
            failed = []
            with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
                jobs = {pool.submit(ensure, name, entries): name for name in sorted(entries)}
                for job in concurrent.futures.as_completed(jobs):
                    try:
                        job.result()
                    except (Failure, OSError) as e:
                        failed.append(jobs[job])
                        print(f"install.py: {jobs[job]}: {e}", file=sys.stderr)
            took = time.monotonic() - start
            print(f"install.py: {len(entries) - len(failed)} of {len(entries)} entries ready in {took:.0f} s"
                  + (f"; failed: {', '.join(failed)} (the tests that need them try again)" if failed else ""))
            return 1 if failed else 0
    except (Failure, OSError) as e:
        print(f"install.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
