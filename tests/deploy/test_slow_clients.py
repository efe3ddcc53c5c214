"""
Slow or malicious clients cannot starve `make serve`: 50 connections that stall in their headers, 50 that
stall in their bodies and 50 that send nothing at all, all open at once, do not delay an ordinary request
beyond a second, and the server closes every one of them within two minutes (nginx's 10 s timeouts), without
ever answering or acting on a request it did not receive whole. Raw sockets, on loopback, bounded in time.
"""

import socket
import time

import pytest
import requests

from ..servers import make_users, production_env, scratch_database, serving

pytestmark = pytest.mark.either_database(reason="the server layer is the same on either database")
STALLED = 50
PROBE_SECONDS = 5
CLOSE_WITHIN_SECONDS = 120


@pytest.fixture(scope="module")
def served():
    with scratch_database() as env:
        token = make_users(env, "alice")["alice"]
        with serving("make-serve", production_env(env, SESSION_CREATE_RATE="100000/min")) as server:
            yield server, token


def stall(port, request_head: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    if request_head:
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


def test_stalled_and_idle_connections_do_not_delay_others_and_are_closed_unanswered(served):
    server, token = served
    header_stall = b"GET /api/modes/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token " + token.encode() + b"\r\n"
    body_stall = (
        b"POST /api/sessions/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token " + token.encode()
        + b'\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ntitle=half'
    )
    stalled = {
        kind: [stall(server.port, head) for _ in range(STALLED)]
        for kind, head in (("headers", header_stall), ("body", body_stall), ("nothing sent", b""))
    }
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
        outcomes = {kind: [closed_after(sock, deadline) for sock in socks] for kind, socks in stalled.items()}
    finally:
        for socks in stalled.values():
            for sock in socks:
                sock.close()
    for kind, results in outcomes.items():
        assert all(seconds is not None for seconds, _ in results), f"a connection stalled in its {kind} stayed open"
        assert all(received == b"" for _, received in results), f"a request stalled in its {kind} was answered"
    # Nothing was made of the half-sent bodies (a form body cut short would otherwise read as a shorter title).
    listed = requests.get(f"{server.base}/api/sessions/", headers={"Authorization": f"Token {token}"}, timeout=30)
    assert listed.json()["results"] == []
