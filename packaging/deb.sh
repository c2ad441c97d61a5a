#!/usr/bin/env bash
# Builds the Debian package target/debian/ochre_<version>-1_<arch>.deb with
# Debian's own dpkg-deb: /usr/bin/ochre (the command line) and
# /usr/bin/ochre-server beside it (the server it hands every other command to;
# the built-in plugins are inside it), both stripped, its built-in plugins
# compiled by that same binary in
# /usr/lib/ochre/compiled (so even the first start compiles nothing), the README
# and the tool list in /usr/share/doc/ochre. Depends on Debian's chromium and on
# the C libraries dpkg-shlibdeps finds the binary linked against.
#
#   bash packaging/deb.sh                  # release build
#   bash packaging/deb.sh dev              # the test build's binary (what CI packages)
#   bash packaging/deb.sh release -o DIR/  # the package into DIR/
#
# Needs dpkg-dev (dpkg-shlibdeps) and binutils (strip): Debian's build-essential
# brings both; it says so when one is missing. OCHRE_CARGO_FLAGS: more options for its `cargo build`
# (words split on spaces).
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-release}
out=""
case "${2:-}" in
  -o | --output) out=${3:?"-o needs a directory"} ;;
  "") ;;
  *) echo "usage: bash packaging/deb.sh [release|dev|PROFILE] [-o DIR/]" >&2; exit 2 ;;
esac
for tool in dpkg-deb dpkg-shlibdeps strip; do
  command -v "$tool" >/dev/null || {
    echo "packaging/deb.sh: $tool not found (apt-get install -y dpkg-dev binutils)" >&2
    exit 1
  }
done
target=${CARGO_TARGET_DIR:-target}
case "$profile" in
  dev) bin_dir=$target/debug ;;
  *) bin_dir=$target/$profile ;;
esac
out=${out:-$target/debian/}
# shellcheck disable=SC2086 # (words on purpose)
cargo build --quiet --locked ${OCHRE_CARGO_FLAGS:-} --profile "$profile" -p ochre --bins
# Compile the built-in plugins with the binary being shipped (the compiled code
# is only valid for the engine that made it).
rm -rf "$bin_dir/ochre-compiled"
data=$(mktemp -d)
stage=$(mktemp -d)
trap 'rm -rf "$data" "$stage"' EXIT
"$bin_dir/ochre" --data-dir "$data" --cache-dir "$bin_dir/ochre-compiled" plugins list >/dev/null
ls "$bin_dir"/ochre-compiled/wasm/*.cwasm >/dev/null

version=$(cargo metadata --no-deps --format-version 1 --offline | python3 -c '
import json, sys
print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "ochre"))')
arch=$(dpkg --print-architecture)
root=$stage/debian/ochre
for bin in ochre ochre-server; do
  install -D -m 755 "$bin_dir/$bin" "$root/usr/bin/$bin"
  strip --strip-unneeded "$root/usr/bin/$bin"
done
install -D -m 644 -t "$root/usr/lib/ochre/compiled" "$bin_dir"/ochre-compiled/wasm/*
install -D -m 644 README.md "$root/usr/share/doc/ochre/README.md"
install -D -m 644 docs/tools.md "$root/usr/share/doc/ochre/tools.md"
cat >"$root/usr/share/doc/ochre/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ochre
Copyright: ochre developers
License: Apache-2.0
EOF
# The libraries the binary needs (libc6 and the like), as Debian's tools find them
# (they read a source package's control file: a minimal one).
mkdir -p "$root/DEBIAN"
printf 'Source: ochre\n\nPackage: ochre\nArchitecture: any\n' >"$stage/debian/control"
libs=$(cd "$stage" && dpkg-shlibdeps -O -e debian/ochre/usr/bin/ochre -e debian/ochre/usr/bin/ochre-server 2>/dev/null |
  sed -n 's/^shlibs:Depends=//p')
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<EOF
Package: ochre
Version: $version-1
Architecture: $arch
Section: web
Priority: optional
Maintainer: ochre developers
Installed-Size: $size
Depends: chromium${libs:+, $libs}
Recommends: ca-certificates, chromium-headless-shell, ffmpeg
Description: A browser-automation MCP server for AI agents
 An MCP server that drives Chromium for AI agents (Claude, Codex, any MCP
 client), with its tools in sandboxed WebAssembly plugins. Register it with
 \`claude mcp add ochre -- /usr/bin/ochre\`; \`ochre doctor\` checks the setup.
EOF
# (Recommends: HTTPS to OCI registries, `ochre plugin install oci://...`, checks
# against the system roots; headless browsers launch as Chromium's lighter
# headless shell when installed; recordings' video needs ffmpeg.)
# The test build's package (CI's) is compressed fast: its binary is the
# unoptimised one (90 MB stripped), which xz at its default level packs slowly.
level=6
if [ "$profile" = dev ]; then level=1; fi
mkdir -p "$out"
deb=${out%/}/ochre_${version}-1_${arch}.deb
dpkg-deb --root-owner-group -Zxz -z"$level" --build "$root" "$deb" >/dev/null
echo "$deb"
