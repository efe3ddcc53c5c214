"""
A design trial for issue 38, not part of the product: would the `mcp` SDK's own server (ASGI, starlette, anyio) hold
the MCP budget (`tools/call agent_list_modes` at least 0.8 of the REST invocation) if it replaced mcp_server/'s view?

It serves `tools/call agent_list_modes` three ways at once, each Granian alone (no nginx) with the same worker count
on the same database, and measures them round by round as benchmarks/run.py does:
- REST: POST /api/tools/agent_list_modes/invoke/ (WSGI), the budget's reference;
- ours: POST /mcp/ (WSGI), the view the product serves;
- SDK: POST /mcp/ on this module's `app` (ASGI): the SDK's lowlevel Server, stateless, JSON answers, whose tool
  does what ours does for this call (the bearer token checked, the published release read, the same service run)
  in Django's sync thread, as an ASGI deployment would.
Before measuring, it checks that both MCP servers answer the same payload. The SDK's tool leaves out what ours adds
around the call (the Origin check, the tool-call throttle, shaping the answer for the request's protocol version), so
its figure is an upper bound. The runs are in benchmarks/RESULTS.md.

    .venv/bin/python -m benchmarks.mcp_sdk_trial [--rounds 3] [--duration 3] [--databases sqlite,postgres]
"""

import argparse
import json
import os
import sys
import tempfile
import urllib.request
from pathlib import Path
from statistics import median_high

from benchmarks.harness import (
    BIN, Endpoint, Servers, commit, drop_databases, prepare_project, project_environment, run_wrk,
)
from benchmarks.run import MCP_CALL


def _sdk_app():
    import django

    django.setup()
    from asgiref.sync import sync_to_async
    from mcp import types
    from mcp.server.lowlevel import Server

    from agent_api.services import invoke_tool
    from mcp_server.authentication import BearerTokenAuthentication
    from modes.catalog import published_release

    def list_modes(authorization: str) -> str:
        user, _ = BearerTokenAuthentication().authenticate_credentials(authorization.split()[-1])
        catalog = published_release().control
        return invoke_tool(
            load_catalog=lambda: catalog, name="agent_list_modes", arguments={}, session=None, conversation_id=None,
            user=user, confirmation_channel=None,
        ).result

    async def call_tool(context, params):
        text = await sync_to_async(list_modes)(context.request.headers["authorization"])
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=json.loads(text)
        )

    server = Server("aptix-modes", on_call_tool=call_tool)
    return server.streamable_http_app(streamable_http_path="/mcp/", stateless_http=True, json_response=True)


if os.environ.get("MCP_SDK_TRIAL") == "serve":
    app = _sdk_app()


def _post(url, token) -> dict:
    """The payload MCP_CALL at url answers, which must be a success."""
    request = urllib.request.Request(url, data=MCP_CALL.encode(), method="POST", headers={
        "Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    })
    with urllib.request.urlopen(request, timeout=10) as response:
        result = json.load(response)["result"]
    if result.get("isError"):
        sys.exit(f"{url} refused the call: {result}")
    return json.loads(result["content"][0]["text"])


class TrialServers(Servers):
    """Servers whose "sdk" kind is Granian serving this module's ASGI app."""

    def _command(self, kind, port):
        if kind != "sdk":
            return super()._command(kind, port)
        return [str(BIN / "granian"), "--interface", "asgi", "--host", "127.0.0.1", "--port", str(port),
                "--workers", str(self.workers), "--no-ws", "--log-level", "warning", "benchmarks.mcp_sdk_trial:app"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--databases", default="sqlite,postgres")
    options = parser.parse_args()
    print(f"{commit()}; mcp_sdk_trial.py {' '.join(sys.argv[1:])}")
    for database in options.databases.split(","):
        with tempfile.TemporaryDirectory() as workdir:
            try:
                _trial(database, Path(workdir), options)
            finally:
                drop_databases(database, names=("project",))


def _trial(database, workdir, options):
    env = project_environment(database, workdir)
    fixture = prepare_project(env)
    targets = {"wsgi": (env, "granian"), "sdk": ({**env, "MCP_SDK_TRIAL": "serve"}, "sdk")}
    rest = Endpoint("REST agent_list_modes", "wsgi", "POST", "/api/tools/agent_list_modes/invoke/",
                    (json.dumps({"arguments": {}}),))
    ours = Endpoint("MCP, our view (WSGI)", "wsgi", "POST", "/mcp/", (MCP_CALL,))
    sdk = Endpoint("MCP, the SDK's server (ASGI)", "sdk", "POST", "/mcp/", (MCP_CALL,))
    ratios = {ours.label: [], sdk.label: []}
    with TrialServers(targets) as servers:
        answers = [_post(servers.bases[endpoint.target] + endpoint.path, fixture["token"]) for endpoint in (ours, sdk)]
        if answers[0] != answers[1]:
            sys.exit(f"The two MCP servers answer differently:\n{answers[0]}\n{answers[1]}")
        for round_number in range(options.rounds):
            for endpoint in (ours, sdk):
                pair = (rest, endpoint) if round_number % 2 == 0 else (endpoint, rest)
                results = {}
                for measured in pair:
                    results[measured.label] = result = run_wrk(
                        servers.bases[measured.target] + measured.path, measured, fixture["token"],
                        duration=options.duration, connections=options.connections, warm_up=round_number == 0,
                    )
                    print(f"[{database}] round {round_number + 1}: {measured.label:<32}{result['rps']:>8.0f}/s "
                          f"p50 {result['p50_ms']:.2f} ms p99 {result['p99_ms']:.2f} ms"
                          + (f"  NON-2xx: {result['errors']}" if result["errors"] else ""), flush=True)
                ratios[endpoint.label].append(results[endpoint.label]["rps"] / results[rest.label]["rps"])
    for label, measured in ratios.items():
        print(f"[{database}] {label} / {rest.label}: x{median_high(measured):.2f} "
              f"(rounds {', '.join(f'{r:.2f}' for r in measured)}); budget 0.8")


if __name__ == "__main__":
    main()
