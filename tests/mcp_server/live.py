"""
What the tests of a live server (`make serve`) do as a client: a session made and its audit read through the
REST API, and an MCP session opened with the official `mcp` SDK.
"""

import httpx2
import requests
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


def new_session(server, token, mode=None):
    """A new session of the token's user, made through the REST API."""
    body = {"mode": mode} if mode else {}
    response = requests.post(f"{server.base}/api/sessions/", json=body, headers={"Authorization": f"Token {token}"})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def mode_changes(server, token, session_id):
    response = requests.get(
        f"{server.base}/api/sessions/{session_id}/mode-changes/", headers={"Authorization": f"Token {token}"}
    )
    assert response.status_code == 200
    return response.json()["results"]


async def in_session(url, token, work, *, version="2026-07-28"):
    """work(session) with a ClientSession that opened with 2025-11-25's handshake or 2026-07-28's discover."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                opened = await (session.initialize() if version == "2025-11-25" else session.discover())
                return opened, await work(session)
