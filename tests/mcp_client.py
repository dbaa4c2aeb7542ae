"""Drive `graphctx mcp` with the official MCP Python SDK (`pip install mcp`).

Usage: python3 tests/mcp_client.py GRAPHCTX_BIN ROOT CALLS_JSON OUT_JSON

CALLS_JSON holds a list of {"tool": name, "arguments": {...}}. The script
starts the server over stdio, initialises, lists the tools, calls each one
in order and writes what it got to OUT_JSON:
{"server": ..., "tools": [{"name", "inputSchema"}], "calls": [{"tool",
"is_error", "text"}], "unknown_tool_error": message}.
Exit code 3 when the SDK is not installed (the test decides what that means).
"""

import asyncio
import json
import sys

try:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
except ImportError as e:  # pragma: no cover - reported to the Rust test
    print(f"mcp SDK missing: {e}", file=sys.stderr)
    sys.exit(3)


async def main(bin_path, root, calls_path, out_path):
    with open(calls_path) as f:
        calls = json.load(f)
    params = StdioServerParameters(command=bin_path, args=["mcp", "--root", root])
    out = {"tools": [], "calls": []}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = init.serverInfo.name
            out["protocol"] = str(init.protocolVersion)
            listed = await session.list_tools()
            out["tools"] = [
                {"name": t.name, "inputSchema": t.inputSchema} for t in listed.tools
            ]
            for c in calls:
                r = await session.call_tool(c["tool"], c.get("arguments") or {})
                text = "".join(getattr(b, "text", "") for b in r.content)
                out["calls"].append(
                    {"tool": c["tool"], "is_error": bool(r.isError), "text": text}
                )
            try:
                r = await session.call_tool("no_such_tool", {})
                out["unknown_tool_error"] = (
                    "".join(getattr(b, "text", "") for b in r.content)
                    if r.isError
                    else None
                )
            except Exception as e:  # a JSON-RPC error is what the spec asks for
                out["unknown_tool_error"] = str(e)
    with open(out_path, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
