#!/usr/bin/env bash
# Installs what the benchmarks in bench/ need, into $OCHRE_BENCH_HOME
# (default: <repo>/target/bench):
#
#   venv/          Python venv with the MCP client SDK and psutil (PyPI)
#   node_modules/  the peer servers @playwright/mcp, chrome-devtools-mcp and agent-browser (npm)
#   fixtures/      the pages: Rust docs from the toolchain's rust-docs component,
#                  httpbin's form page from its PyPI wheel, bench/pages/interactive.html
#
# Every part is pinned and keyed by a stamp file: a second run skips what is
# already installed at these versions. Needs python3 (with venv), npm, rustup.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
home=${OCHRE_BENCH_HOME:-$repo/target/bench}

PY_PINS="mcp==2.3.0 psutil==7.2.2 websockets==17.4"
NPM_PINS="@playwright/mcp@0.0.83 chrome-devtools-mcp@1.11.0 agent-browser@0.41.2"
HTTPBIN_PIN="httpbin==0.10.4"
FIXTURES_LAYOUT=1 # bump when the fixture tree below changes

die() { echo "bench/setup.sh: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "'$1' not found: $2"; }
# stamped FILE KEY: true when FILE holds exactly KEY.
stamped() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }

need python3 "install Python 3 (apt-get install -y python3 python3-venv)"
need npm "install Node.js and npm (apt-get install -y nodejs npm)"
need rustc "install a Rust toolchain with rustup"
mkdir -p "$home"

install_venv() {
  local venv=$home/venv stamp=$home/venv/.ochre-bench-stamp
  if stamped "$stamp" "$PY_PINS"; then echo "venv: up to date ($PY_PINS)"; return; fi
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" || die "python3 -m venv failed (on Debian/Ubuntu: apt-get install -y python3-venv)"
  fi
  # shellcheck disable=SC2086 # the pins are separate words on purpose
  "$venv/bin/pip" install --quiet --disable-pip-version-check $PY_PINS
  echo "$PY_PINS" > "$stamp"
  echo "venv: installed $PY_PINS"
}

install_peers() {
  local stamp=$home/node_modules/.ochre-bench-stamp
  if stamped "$stamp" "$NPM_PINS"; then echo "node_modules: up to date ($NPM_PINS)"; return; fi
  (
    cd "$home"
    [ -f package.json ] || npm init -y >/dev/null
    # shellcheck disable=SC2086
    npm install --silent --no-audit --no-fund $NPM_PINS
  )
  echo "$NPM_PINS" > "$stamp"
  echo "node_modules: installed $NPM_PINS"
}

rust_html() {
  local html
  html="$(rustc --print sysroot)/share/doc/rust/html"
  if [ ! -f "$html/std/vec/struct.Vec.html" ]; then
    need rustup "the Rust docs are missing at $html and rustup is needed to add them"
    rustup component add rust-docs >&2
  fi
  [ -f "$html/std/vec/struct.Vec.html" ] || die "no Rust docs at $html even after 'rustup component add rust-docs'"
  echo "$html"
}

# Copies the three Rust doc pages with what they load, keeping the tree's
# layout so that their relative links work: rustdoc pages need static.files/,
# the crate list and each module's sidebar items; the mdBook chapter needs the
# book's top-level scripts, styles and icons, css/, fonts/, theme/, the ferris
# images and toc.html. The book's search index is left out (loaded on search only).
copy_rust_docs() {
  local html=$1 dest=$2
  mkdir -p "$dest"
  (
    cd "$html"
    cp -r --parents static.files crates*.js \
      std/index.html std/sidebar-items*.js \
      std/vec/struct.Vec.html std/vec/sidebar-items*.js \
      book/ch08-01-vectors.html book/toc.html book/css book/fonts book/theme book/img/ferris \
      "$dest/"
    find book -maxdepth 1 -type f ! -name '.*' ! -name '*.html' ! -name 'searchindex*' \
      -exec cp --parents {} "$dest/" \;
  )
}

# httpbin's forms-post.html is a Flask template whose one expression is the form action.
extract_httpbin_form() {
  local dest=$1 tmp
  tmp=$(mktemp -d)
  "$home/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --dest "$tmp" "$HTTPBIN_PIN"
  "$home/venv/bin/python" - "$tmp"/httpbin-*.whl "$dest" <<'PY'
import sys
import zipfile

wheel, dest = sys.argv[1], sys.argv[2]
html = zipfile.ZipFile(wheel).read("httpbin/templates/forms-post.html").decode()
html = html.replace("{{ url_for('view_post') }}", "/post")
if "{{" in html:
    sys.exit(f"forms-post.html in {wheel} has a template expression left; update bench/setup.sh")
with open(dest, "w") as out:
    out.write(html)
PY
  rm -rf "$tmp"
}

install_fixtures() {
  local html key stamp=$home/fixtures/.ochre-bench-stamp new=$home/fixtures.new
  html=$(rust_html)
  key="layout=$FIXTURES_LAYOUT rust-docs=$(rustc --version) $HTTPBIN_PIN interactive=$(sha256sum < "$here/pages/interactive.html" | cut -c1-16)"
  if stamped "$stamp" "$key"; then echo "fixtures: up to date"; return; fi
  rm -rf "$new"
  mkdir -p "$new/httpbin" "$new/interactive"
  copy_rust_docs "$html" "$new/rust"
  extract_httpbin_form "$new/httpbin/forms-post.html"
  cp "$here/pages/interactive.html" "$new/interactive/index.html"
  # Browsers ask every page without an icon for /favicon.ico: answer with a real one.
  cp "$html/favicon-32x32.png" "$new/favicon.ico"
  echo "$key" > "$new/.ochre-bench-stamp"
  rm -rf "$home/fixtures"
  mv "$new" "$home/fixtures"
  echo "fixtures: built ($(du -sh "$home/fixtures" | cut -f1))"
}

install_venv
install_peers
install_fixtures
echo "ready: $home"
