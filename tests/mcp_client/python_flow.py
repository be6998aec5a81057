"""The MCP endpoint through the MCP Python SDK (`mcp`, pinned in tools/requirements-test.txt), a
second client independent of the TypeScript one: with a personal access token, it connects in
the SDK's default mode (a `server/discover` probe at 2026-07-28, stateless, the version in `_meta`
and in the headers) and in its legacy mode (the 2025-11-25 `initialize`), lists the default
surface (at most 15 tools: the two reaching tools and documented bearer operations), searches
for "subscription billing", calls a read, a create through callOperation (then read back through
the REST API) and a failing call; then lists the tags toolset chosen by the X-MCP-Toolsets
header and sees a write refused by callOperation at /mcp/readonly, nothing written.

    python3 tests/mcp_client/python_flow.py http://127.0.0.1:3000 <personal access token>

Exits non-zero on the first failure. scripts/test.sh runs it against the local server.
"""

import asyncio
import json
import sys
import urllib.request
import uuid

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", file=sys.stderr)
        sys.exit(1)


def get_json(url, token=None):
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    with urllib.request.urlopen(request) as response:
        return json.load(response)


REACHING = ["searchOperations", "callOperation"]


def documented_tools(base):
    document = get_json(f"{base}/docs/json")
    names = set()
    for item in document["paths"].values():
        for operation in item.values():
            bearer = any("bearer" in requirement for requirement in operation.get("security") or [])
            body = operation.get("requestBody", {}).get("content")
            if bearer and (body is None or "application/json" in body):
                names.add(operation["operationId"])
    return names


def call(operation_id, arguments):
    return {"operationId": operation_id, "arguments": arguments}


async def session(base, token, mode):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    transport = streamable_http_client(f"{base}/mcp", http_client=http)
    async with Client(transport, mode=mode) as client:
        expected = "2026-07-28" if mode == "auto" else "2025-11-25"
        check(client.protocol_version == expected, f"[{mode}] protocol version {client.protocol_version}")
        check(client.server_info and client.server_info.name == "workapi", f"[{mode}] server info {client.server_info}")
        tools = (await client.list_tools()).tools
        names = [tool.name for tool in tools]
        check(len(tools) <= 15 and names[:2] == REACHING, f"[{mode}] the default surface: {names}")
        check(set(names[2:]) <= documented_tools(base), f"[{mode}] {names}: documented operations")

        found = await client.call_tool("searchOperations", {"query": "subscription billing"})
        operations = {o["operationId"]: o for o in found.structured_content["operations"]}
        billing = operations.get("createSubscriptionBilling")
        check(billing and "projectId" in billing["inputSchema"]["properties"], f"[{mode}] search: {found}")

        listed = await client.call_tool("listTags", {"type": "task"})
        check(not listed.is_error and isinstance(listed.structured_content.get("result"), list), f"[{mode}] {listed}")

        name = f"Via the Python SDK {uuid.uuid4().hex[:8]}"
        created = await client.call_tool("callOperation", call("createTag", {"type": "task", "name": name}))
        check(not created.is_error and created.structured_content["name"] == name, f"[{mode}] {created}")
        rest = get_json(f"{base}/tags/task", token)
        check(any(tag["id"] == created.structured_content["id"] for tag in rest), f"[{mode}] the tag over REST")

        failed = await client.call_tool("callOperation", call("createTag", {"type": "task", "name": ""}))
        check(failed.is_error, f"[{mode}] isError: {failed}")
        check(failed.structured_content["statusCode"] == 400, f"[{mode}] the error body: {failed}")
        check(json.loads(failed.content[0].text)["errors"]["name"], f"[{mode}] the error body as text: {failed}")
        count, version = len(tools), client.protocol_version

    # A toolset by header lists its tools in full.
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}", "X-MCP-Toolsets": "tags"})
    async with Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        check(names == REACHING + ["listTags", "createTag", "deleteTag", "saveTagColor"], f"[{mode}] tags: {names}")

    # Read-only by URL: reads only, and a write through callOperation is refused, nothing written.
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    async with Client(streamable_http_client(f"{base}/mcp/readonly", http_client=http), mode=mode) as client:
        tools = (await client.list_tools()).tools
        check(all(tool.annotations.read_only_hint for tool in tools), f"[{mode}] read-only lists reads only")
        name = f"Refused {uuid.uuid4().hex[:8]}"
        refused = await client.call_tool("callOperation", call("createTag", {"type": "task", "name": name}))
        check(refused.is_error and refused.structured_content["statusCode"] == 403, f"[{mode}] refused: {refused}")
        check(not any(tag["name"] == name for tag in get_json(f"{base}/tags/task", token)), f"[{mode}] nothing written")
    return count, version


async def main(base, token):
    for mode in ("auto", "legacy"):
        count, version = await session(base, token, mode)
        print(
            f"MCP Python SDK ({mode}, {version}): {count} default tools; search, read, callOperation create, "
            "failing call, toolset, read-only: ok"
        )


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: python_flow.py <base URL> <personal access token>", file=sys.stderr)
        sys.exit(2)
    asyncio.run(main(sys.argv[1], sys.argv[2]))
