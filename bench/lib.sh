# What bench/run.sh and bench/many_agents.sh share (sourced, not run):
# the paths, the setup, the release build, and how a benchmark script is run.
#
#   bench_prepare NAME     sets $report (docs/bench/<date>-NAME.md), $json
#                          (target/bench/<date>-NAME.json) and $tmp, runs setup.sh
#                          and builds ochre in release mode (OCHRE_BENCH_NO_BUILD=1: not)
#   bench_python SCRIPT ARGS...   runs bench/SCRIPT with the venv python and the
#                          fixtures, peers and release ochre of the setup
#   bench_report TITLE INTRO      writes $report: "# TITLE", INTRO, then stdin

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
export OCHRE_BENCH_HOME=${OCHRE_BENCH_HOME:-$repo/target/bench}
home=$OCHRE_BENCH_HOME
ochre=${CARGO_TARGET_DIR:-$repo/target}/release/ochre
day=$(date +%F)

bench_prepare() {
  report=$repo/docs/bench/$day-$1.md
  json=$home/$day-$1.json
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  bash "$here/setup.sh"
  cd "$repo"
  if [ "${OCHRE_BENCH_NO_BUILD:-}" = 1 ]; then
    echo "build: skipped (OCHRE_BENCH_NO_BUILD=1)"
  else
    # -p ochre: the same features as the startup bench, so one build serves both
    cargo build --release -p ochre --bins
  fi
}

bench_python() {
  local script=$1
  shift
  "$home/venv/bin/python" "$here/$script" \
    --fixtures "$home/fixtures" --node-bin "$home/node_modules/.bin" \
    --ochre-cmd "$ochre --headless" "$@"
}

bench_report() {
  mkdir -p "$(dirname "$report")"
  {
    echo "# $1"
    echo
    echo "$2"
    echo
    cat
  } > "$report"
  echo "report: $report"
}
