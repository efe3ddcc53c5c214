"""
Slow or malicious clients cannot starve `make serve`: 50 connections that stall in their headers and 50 that
stall in their bodies, all at once, do not delay an ordinary request beyond a second, and the server closes
the ones stalled in their headers within two minutes (Granian's 30 s). Raw sockets, on loopback, bounded in
time. (A connection stalled in its body stays open, holding one of a worker's threads: Granian has no body
timeout; see the README.)
"""

import socket
import time

import pytest
import requests
from django.db import connection

from .servers import make_users, production_env, scratch_database, serving

pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="the server layer is the same on either database: run once, on SQLite"
)
STALLED = 50
PROBE_SECONDS = 5
CLOSE_WITHIN_SECONDS = 120


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with scratch_database(tmp_path_factory.mktemp("slow")) as env:
        token = make_users(env, "alice")["alice"]
        with serving("make-serve", production_env(env, SESSION_CREATE_RATE="100000/min")) as server:
            yield server, token


def stall(port, request_head: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(request_head)
    return sock


def closed_after(sock, deadline) -> tuple[float | None, bytes]:
    """When the server closed sock (seconds from now), and what it sent first; None if not by the deadline."""
    started, received = time.monotonic(), b""
    while time.monotonic() < deadline:
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        except OSError:
            return time.monotonic() - started, received
        if not chunk:
            return time.monotonic() - started, received
        received += chunk
    return None, received


def test_stalled_headers_and_bodies_do_not_delay_others_and_are_closed(served):
    server, token = served
    header_stall = b"GET /api/modes/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token " + token.encode() + b"\r\n"
    body_stall = (
        b"POST /api/sessions/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token " + token.encode()
        + b"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n" + b'{"title": '
    )
    stalled = [stall(server.port, header_stall) for _ in range(STALLED)]
    body_stalled = [stall(server.port, body_stall) for _ in range(STALLED)]
    started = time.monotonic()
    try:
        latencies = []
        while time.monotonic() - started < PROBE_SECONDS:
            begun = time.monotonic()
            response = requests.get(f"{server.base}/api/modes/", headers={"Authorization": f"Token {token}"}, timeout=30)
            latencies.append(time.monotonic() - begun)
            assert response.status_code == 200
            time.sleep(0.1)
        assert max(latencies) < 1.0, f"an ordinary request waited {max(latencies):.2f} s"

        deadline = started + CLOSE_WITHIN_SECONDS
        outcomes = [closed_after(sock, deadline) for sock in stalled]
    finally:
        for sock in stalled + body_stalled:
            sock.close()
    assert sum(seconds is None for seconds, _ in outcomes) == 0, "a connection stalled in its headers stayed open"
    assert all(received == b"" for _, received in outcomes), "the server answered a request it never had whole"
    # Nothing was made of the half-sent bodies.
    listed = requests.get(f"{server.base}/api/sessions/", headers={"Authorization": f"Token {token}"}, timeout=30)
    assert listed.json()["count"] == 0
