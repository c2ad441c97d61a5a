#!/usr/bin/env python3
"""What .ci/lib.sh prints at the end of a run, from nextest's JUnit report and
the doc tests' output:

    report.py failures JUNIT        the failing tests by name, and those that
                                    passed only on a retry
    report.py counts JUNIT DOCLOG   the closing line `tests: N passed, N failed`
"""
import os
import re
import sys
import xml.etree.ElementTree as ET


def cases(junit: str):
    if not os.path.exists(junit):
        return []
    return list(ET.parse(junit).iter("testcase"))


def failed(case) -> bool:
    return case.find("failure") is not None or case.find("error") is not None


def flaky(case) -> bool:
    """Passed, but only on a retry (a failed try is kept as flakyFailure)."""
    return not failed(case) and any(e.tag in ("flakyFailure", "flakyError") for e in case)


def main(argv: list) -> int:
    if argv[:1] == ["failures"] and len(argv) == 2:
        names = [f"{c.get('classname')} {c.get('name')}" for c in cases(argv[1]) if failed(c)]
        if names:
            print(f"ci: {len(names)} failing tests (each one's output, with the last lines of the servers and apps it started, is above, under nextest's summary):")
            for name in names:
                print(f"  {name}")
        names = [f"{c.get('classname')} {c.get('name')}" for c in cases(argv[1]) if flaky(c)]
        if names:
            print(f"ci: {len(names)} tests passed only on a retry (each failed try's output is above, under TRY 1 FAIL):")
            for name in names:
                print(f"  {name}")
        return 0
    if argv[:1] == ["counts"] and len(argv) == 3:
        passed = bad = retried = 0
        for c in cases(argv[1]):
            if failed(c):
                bad += 1
            elif c.find("skipped") is None:
                passed += 1
                retried += flaky(c)
        if os.path.exists(argv[2]):
            for m in re.finditer(r"test result: \w+\. (\d+) passed; (\d+) failed", open(argv[2]).read()):
                passed += int(m.group(1))
                bad += int(m.group(2))
        print(f"tests: {passed} passed" + (f" ({retried} only on a retry)" if retried else "") + f", {bad} failed")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
