#!/usr/bin/env bash
# Builds the Debian package target/debian/ochre_<version>_<arch>.deb with cargo-deb
# (installed if missing): /usr/bin/ochre (the built-in plugins are inside it), its
# built-in plugins compiled by that same binary in /usr/lib/ochre/compiled (so
# even the first start compiles nothing), the README and the tool list in
# /usr/share/doc/ochre. Depends on Debian's chromium.
#
#   bash packaging/deb.sh            # release build
#   bash packaging/deb.sh dev        # the test build's binary (what CI packages)
#
# OCHRE_CARGO_FLAGS: more options for its `cargo build` (words split on spaces).
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO_DEB_VERSION=3.6.4
profile=${1:-release}
target=${CARGO_TARGET_DIR:-target}
case "$profile" in
  dev) bin_dir=$target/debug ;;
  *) bin_dir=$target/$profile ;;
esac
if ! cargo deb --version 2>/dev/null | grep -q "$CARGO_DEB_VERSION"; then
  echo "installing cargo-deb $CARGO_DEB_VERSION" >&2
  cargo install --quiet --locked cargo-deb --version "$CARGO_DEB_VERSION"
fi
# shellcheck disable=SC2086 # (words on purpose)
cargo build --quiet --locked ${OCHRE_CARGO_FLAGS:-} --profile "$profile" -p ochre --bin ochre
# Compile the built-in plugins with the binary being shipped (the compiled code
# is only valid for the engine that made it).
rm -rf "$bin_dir/ochre-compiled"
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
"$bin_dir/ochre" --data-dir "$data" --cache-dir "$bin_dir/ochre-compiled" plugins list >/dev/null
ls "$bin_dir"/ochre-compiled/wasm/*.cwasm >/dev/null
# The test build's package (CI's) is compressed fast: its binary has debug line
# tables (168 MB), which xz at its default level takes 25 s to pack.
fast=()
if [ "$profile" = dev ]; then fast=(--fast); fi
cargo deb --quiet -p ochre --profile "$profile" --no-build "${fast[@]}" "${@:2}"
