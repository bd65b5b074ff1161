#!/usr/bin/env bash
# Installs what the end-to-end tests need, following ../shared/vscode-e2e.md:
# Debian's Chromium, code-server from npm (a real VS Code 1.100 in the browser)
# and playwright-core to drive it. Everything npm writes is cached under $E2E
# (default: <repo>/.e2e); a second run with the cache in place does nothing.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../../.." && pwd)
E2E=${E2E:-$REPO/.e2e}
CODE_SERVER_VERSION=4.100.3     # VS Code 1.100: the newest code-server that runs on Node 20
RG_CACHE=vscode-ripgrep-cache-1.15.11
RG_TARBALL=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz

need_apt=()
command -v chromium >/dev/null || need_apt+=(chromium)
command -v rg >/dev/null || need_apt+=(ripgrep)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need_apt+=(libkrb5-dev)   # code-server's kerberos module builds against it
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "e2e setup: apt-get install ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

mkdir -p "$E2E/tmp" "$E2E/home" "$E2E/rg"
if [ ! -x "$E2E/cs/node_modules/.bin/code-server" ]; then
  echo "e2e setup: npm install code-server@$CODE_SERVER_VERSION (a few minutes)"
  # @vscode/ripgrep's postinstall downloads rg from GitHub, which is out of reach:
  # seed the cache it looks in first with Debian's rg.
  mkdir -p "$E2E/tmp/$RG_CACHE"
  cp "$(command -v rg)" "$E2E/rg/rg"
  tar czf "$E2E/tmp/$RG_CACHE/$RG_TARBALL" -C "$E2E/rg" rg
  # npm_config_yes: node-pty's postinstall would otherwise wait for a prompt.
  TMPDIR=$E2E/tmp npm_config_yes=true npm install --no-audit --no-fund --loglevel=error \
    --prefix "$E2E/cs" "code-server@$CODE_SERVER_VERSION" --unsafe-perm
fi
if [ ! -d "$E2E/drv/node_modules/playwright-core" ]; then
  echo "e2e setup: npm install playwright-core@1.65.1"
  npm install --no-audit --no-fund --loglevel=error --prefix "$E2E/drv" playwright-core@1.65.1
fi
echo "e2e setup: ready in $E2E"
