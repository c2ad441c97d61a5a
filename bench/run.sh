#!/usr/bin/env bash
# The benchmark in one command:
#
#   bash bench/run.sh [--reps N] [other side_by_side.py options]
#
# installs the peers, client and fixtures (bench/setup.sh), builds ochre in
# release mode, runs the Rust startup bench and the side-by-side MCP benchmark,
# and writes the report to docs/bench/<date>-side-by-side.md (the raw runs go
# to target/bench/<date>-side-by-side.json).
#
# Environment:
#   OCHRE_BENCH_HOME=DIR        where setup.sh installs (default: target/bench)
#   OCHRE_BENCH_NO_BUILD=1      use the release ochre that is there
#   CARGO_TARGET_DIR            honoured (the binary is <target>/release/ochre)
#   OCHRE_BENCH_SKIP_STARTUP=1  leave out the cargo startup bench
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_prepare side-by-side

if [ "${OCHRE_BENCH_SKIP_STARTUP:-}" = 1 ]; then
  echo "skipped (OCHRE_BENCH_SKIP_STARTUP=1)" > "$tmp/startup.md"
else
  OCHRE_BENCH_NODE_MODULES=$home/node_modules cargo bench -p ochre --bench startup | tee "$tmp/startup.md"
fi

status=0
bench_python side_by_side.py --out "$json" --markdown "$tmp/side-by-side.md" "$@" || status=$?

if [ -f "$tmp/side-by-side.md" ]; then
  {
    echo "## MCP servers over stdio (bench/side_by_side.py)"
    echo
    cat "$tmp/side-by-side.md"
    echo
    echo "## Startup (cargo bench -p ochre --bench startup)"
    echo
    cat "$tmp/startup.md"
  } | bench_report "Side by side: playwright-mcp, chrome-devtools-mcp, agent-browser, ochre and the raw-CDP floor ($day)" \
    "\`bash bench/run.sh $*\`; how to read it: bench/README.md. Raw runs: \`target/bench/$day-side-by-side.json\`."
  echo "runs:   $json"
fi
[ "$status" = 0 ] || echo "bench/run.sh: side_by_side.py failed or an action was not verified (status $status); see above" >&2
exit "$status"
