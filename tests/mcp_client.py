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


def attr(obj, *names):
    """The first attribute that exists (the SDK renamed camelCase to snake_case)."""
    for n in names:
        if hasattr(obj, n):
            return getattr(obj, n)
    raise AttributeError(f"{type(obj).__name__} has none of {names}")


def text_of(result):
    return "".join(getattr(b, "text", "") for b in result.content)


async def main(bin_path, root, calls_path, out_path):
    with open(calls_path) as f:
        calls = json.load(f)
    params = StdioServerParameters(command=bin_path, args=["mcp", "--root", root])
    out = {"tools": [], "calls": []}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = attr(init, "server_info", "serverInfo").name
            out["protocol"] = str(attr(init, "protocol_version", "protocolVersion"))
            listed = await session.list_tools()
            out["tools"] = [
                {"name": t.name, "inputSchema": attr(t, "input_schema", "inputSchema")}
                for t in listed.tools
            ]
            for c in calls:
                r = await session.call_tool(c["tool"], c.get("arguments") or {})
                out["calls"].append(
                    {
                        "tool": c["tool"],
                        "is_error": bool(attr(r, "is_error", "isError")),
                        "text": text_of(r),
                    }
                )
            try:
                r = await session.call_tool("no_such_tool", {})
                out["unknown_tool_error"] = (
                    text_of(r) if attr(r, "is_error", "isError") else None
                )
            except Exception as e:  # a JSON-RPC error is what the spec asks for
                out["unknown_tool_error"] = str(e)
    with open(out_path, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
