#!/usr/bin/env bash
# Installs the real clients the server tests drive: Neovim (Debian's
# package) for tests/it/lsp.rs and the official MCP Python SDK for
# tests/it/mcp.rs; the renderers the diagram tests check with: Graphviz
# (Debian) and Mermaid's parser (npm, project-local); and Chromium
# (Debian's package, /usr/bin/chromium) for the viewer's pages in
# tests/it/view.rs. Idempotent and quiet: does nothing for a client that is
# already there.
set -euo pipefail

# apt_install COMMAND PACKAGE: install PACKAGE (Debian) unless COMMAND runs.
apt_install() {
    if ! command -v "$1" >/dev/null 2>&1; then
        echo "installing $2 (apt-get)"
        export DEBIAN_FRONTEND=noninteractive
        if ! apt-get install -y -qq "$2" >/dev/null 2>&1; then
            apt-get update -qq >/dev/null
            apt-get install -y -qq "$2" >/dev/null
        fi
    fi
}

apt_install nvim neovim

apt_install chromium chromium

# The SDK version the client script was written against.
MCP_SDK_VERSION=2.3.0
if ! python3 -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$MCP_SDK_VERSION')" >/dev/null 2>&1; then
    echo "installing the MCP Python SDK (pip install mcp==$MCP_SDK_VERSION)"
    python3 -m pip install -q --disable-pip-version-check "mcp==$MCP_SDK_VERSION" >/dev/null
fi

# Graphviz's dot: tests/it/diagram.rs renders every DOT diagram with it.
apt_install dot graphviz

# Mermaid's own parser (and jsdom, the window its label sanitiser needs):
# tests/it/diagram.rs parses every Mermaid diagram with it. Project-local
# (.test-clients/mermaid, ignored by git); no browser is downloaded.
MERMAID_VERSION=12.3.0
JSDOM_VERSION=26.1.0
MERMAID_DIR="$(cd "$(dirname "$0")/.." && pwd)/.test-clients/mermaid"
if [ "$(cd "$MERMAID_DIR" 2>/dev/null && node -p "require('mermaid/package.json').version + ' ' + require('jsdom/package.json').version" 2>/dev/null)" != "$MERMAID_VERSION $JSDOM_VERSION" ]; then
    echo "installing mermaid $MERMAID_VERSION and jsdom $JSDOM_VERSION into $MERMAID_DIR (npm)"
    mkdir -p "$MERMAID_DIR"
    [ -f "$MERMAID_DIR/package.json" ] || echo '{"private": true}' >"$MERMAID_DIR/package.json"
    npm install --prefix "$MERMAID_DIR" --no-audit --no-fund --silent --save-exact \
        "mermaid@$MERMAID_VERSION" "jsdom@$JSDOM_VERSION" >/dev/null
fi

nvim --version | head -n 1
/usr/bin/chromium --version 2>/dev/null
python3 -c "import importlib.metadata as m; print('mcp', m.version('mcp'))"
dot -V 2>&1
(cd "$MERMAID_DIR" && node -p "'mermaid ' + require('mermaid/package.json').version")
