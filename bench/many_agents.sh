#!/usr/bin/env bash
# Many agents on one machine, in one command:
#
#   bash bench/many_agents.sh [--sessions 1,8,32] [--seconds 40] [other many_agents.py options]
#
# installs the peers, client and fixtures (bench/setup.sh), builds ochre in
# release mode, runs bench/many_agents.py (N sessions over Streamable HTTP,
# ochre and playwright-mcp taking turns at each N, then the navigation floor)
# and writes the report to docs/bench/<date>-many-agents.md (raw results:
# target/bench/<date>-many-agents.json). Exits 1 when an ochre session saw an
# error (a peer's errors are in the tables).
#
# Environment: OCHRE_BENCH_HOME, OCHRE_BENCH_NO_BUILD=1, CARGO_TARGET_DIR, as bench/run.sh.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_prepare many-agents

status=0
bench_python many_agents.py --out "$json" --markdown "$tmp/many-agents.md" "$@" || status=$?

if [ -f "$tmp/many-agents.md" ]; then
  bench_report "Many agents on one machine: ochre and playwright-mcp over Streamable HTTP ($day)" \
    "\`bash bench/many_agents.sh $*\`; how to read it: bench/README.md (\"many_agents.py\"). Raw results: \`target/bench/$day-many-agents.json\`." \
    < "$tmp/many-agents.md"
fi
[ "$status" = 0 ] || echo "bench/many_agents.sh: an ochre session saw an error, or the run failed (status $status); see above" >&2
exit "$status"
