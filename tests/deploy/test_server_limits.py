"""
Requests that `make serve` refuses before the app sees them (a Content-Length that is not a number, a request
line over 8 KiB, headers over their limits, a body over 8 MiB, a method the service does not serve) are answered
with the API's JSON error body, not an HTML page; and what reaches the app is judged there as everywhere: a
JSON key given twice is a 400 naming it, and a chunked body, which nginx reads whole, is taken like any other.
Raw HTTP against a live server.
"""

import json
import socket

import pytest
import requests

from ..servers import make_users, production_env, scratch_database, serving

pytestmark = pytest.mark.either_database(reason="nginx and the request parsing are the same on either database")


@pytest.fixture(scope="module")
def served():
    with scratch_database() as env:
        token = make_users(env, "alice")["alice"]
        with serving("make-serve", production_env(env), "WORKERS=1") as server:
            yield server, token


def raw_request(port, head: bytes, body: bytes = b"") -> tuple[int, dict, bytes]:
    """Status, headers (lower-cased names) and body of the one answer to a request sent byte for byte."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head + b"Connection: close\r\n\r\n" + body)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except ConnectionResetError:  # nginx may reset once it has answered a body it will not read
            pass
    head_text, _, answer = received.partition(b"\r\n\r\n")
    status_line, *header_lines = head_text.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in header_lines)
    return int(status_line.split()[1]), headers, answer


@pytest.mark.parametrize(
    "head, status, detail",
    [
        (
            b"POST /api/sessions/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n",
            400,
            "The request is malformed (its request line or headers, such as Content-Length, cannot be read).",
        ),
        (
            b"GET /api/modes/?filter=" + b"x" * 9 * 1024 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n",
            414,
            "The request line is over the server's limit of 8 KiB.",
        ),
        (
            b"GET /api/modes/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: " + b"x" * 9 * 1024 + b"\r\n",
            431,
            "The request headers are over the server's limits: 8 KiB a line, 32 KiB in all.",
        ),
        (
            b"GET /api/modes/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + b"".join(b"X-Many-%d: %s\r\n" % (number, b"x" * 7000) for number in range(6)),
            431,
            "The request headers are over the server's limits: 8 KiB a line, 32 KiB in all.",
        ),
        (
            b"POST /api/sessions/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 9000000\r\n",
            413,
            "The request body is over the server's limit of 8 MiB.",
        ),
    ],
    ids=["content-length-not-a-number", "request-line-9-KiB", "header-line-9-KiB", "headers-42-KiB", "body-9-MB"],
)
def test_what_the_server_refuses_is_answered_in_json(served, head, status, detail):
    server, _ = served
    answered, headers, body = raw_request(server.port, head)
    assert (answered, headers["content-type"]) == (status, "application/json")
    assert json.loads(body) == {"detail": detail}


def test_a_json_key_given_twice_is_a_400_naming_it_and_creates_nothing(served):
    server, token = served
    sessions = f"{server.base}/api/sessions/"
    auth = f"Authorization: Token {token}\r\n".encode()
    before = requests.get(sessions, headers={"Authorization": f"Token {token}"}, timeout=30).json()["results"]
    body = b'{"title": "first", "title": "second"}'
    status, _, answer = raw_request(
        server.port,
        b"POST /api/sessions/ HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth
        + b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body),
        body,
    )
    assert (status, json.loads(answer)) == (
        400, {"detail": "JSON parse error - the key 'title' appears twice in one object"}
    )
    after = requests.get(sessions, headers={"Authorization": f"Token {token}"}, timeout=30).json()["results"]
    assert after == before


def test_a_chunked_body_is_read_whole_and_taken(served):
    server, token = served
    body = b'{"title": "Sent in chunks"}'
    chunked = b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (10, body[:10], len(body) - 10, body[10:])
    status, _, answer = raw_request(
        server.port,
        b"POST /api/sessions/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token " + token.encode()
        + b"\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n",
        chunked,
    )
    assert status == 201
    assert json.loads(answer)["title"] == "Sent in chunks"


SERVED_METHODS = "get, head, post, options"  # raw_request lower-cases header lines whole


@pytest.mark.parametrize("method", [b"TRACE", b"PUT", b"DELETE", b"PATCH", b"BREW"])
def test_a_method_the_service_does_not_serve_gets_a_json_405_naming_the_methods_it_does(served, method):
    server, _ = served
    answered, headers, body = raw_request(server.port, method + b" /api/modes/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    assert (answered, headers["content-type"], headers["allow"]) == (405, "application/json", SERVED_METHODS)
    assert json.loads(body) == {
        "detail": "This method is not served here; the service serves GET, HEAD, POST and OPTIONS."
    }


def test_a_method_the_service_serves_but_not_at_that_address_gets_the_apps_json_405(served):
    server, _ = served
    answered, headers, body = raw_request(server.port, b"POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    assert (answered, headers["content-type"], headers["allow"]) == (405, "application/json", "get, head")
    assert "detail" in json.loads(body)
