#!/usr/bin/env bash
# Fetches the MCP reference servers used by tests/mcp_everything.rs,
# tests/mcp_run.rs and tests/mcp_tui.rs into npm's cache, so the tests do not spend their time downloading it. Without node
# and npx the tests skip with a printed reason; this script says so too and
# does not fail the build.
set -uo pipefail

PACKAGES=("@modelcontextprotocol/server-everything" "@modelcontextprotocol/server-filesystem")

if ! command -v npx >/dev/null 2>&1; then
    echo "mcp-setup: npx is not installed; the MCP reference-server tests will be skipped" >&2
    exit 0
fi

echo "mcp-setup: node $(node --version 2>/dev/null || echo '?'), npm $(npm --version 2>/dev/null || echo '?')"
# `--call true` installs the package into the npx cache and runs nothing.
for PACKAGE in "${PACKAGES[@]}"; do
    if NPM_CONFIG_UPDATE_NOTIFIER=false npx -y --package "$PACKAGE" -c true </dev/null; then
        echo "mcp-setup: $PACKAGE is in the npx cache"
    else
        echo "mcp-setup: could not fetch $PACKAGE; the tests that need it will be skipped" >&2
    fi
done
exit 0
