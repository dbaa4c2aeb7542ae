#!/usr/bin/env bash
# Installs the real clients the server tests drive: Neovim (Debian's
# package) for tests/it/lsp.rs, the official MCP Python SDK for
# tests/it/mcp.rs and Chromium (Debian's package, /usr/bin/chromium) for
# the viewer's pages in tests/it/view.rs. Idempotent and quiet: does nothing for a client that is
# already there.
set -euo pipefail

if ! command -v nvim >/dev/null 2>&1; then
    echo "installing neovim (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -qq neovim >/dev/null 2>&1; then
        apt-get update -qq >/dev/null
        apt-get install -y -qq neovim >/dev/null
    fi
fi

if ! [ -x /usr/bin/chromium ]; then
    echo "installing chromium (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -qq chromium >/dev/null 2>&1; then
        apt-get update -qq >/dev/null
        apt-get install -y -qq chromium >/dev/null
    fi
fi

# The SDK version the client script was written against.
MCP_SDK_VERSION=2.3.0
if ! python3 -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$MCP_SDK_VERSION')" >/dev/null 2>&1; then
    echo "installing the MCP Python SDK (pip install mcp==$MCP_SDK_VERSION)"
    python3 -m pip install -q --disable-pip-version-check "mcp==$MCP_SDK_VERSION" >/dev/null
fi

nvim --version | head -n 1
/usr/bin/chromium --version 2>/dev/null
python3 -c "import importlib.metadata as m; print('mcp', m.version('mcp'))"
