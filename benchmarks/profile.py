"""
Where a request's time goes: serves the app with `make serve` as one worker process with one thread, drives one
endpoint with wrk so that the thread is never idle, samples that thread with py-spy (waiting for the database
included), and sorts every sample under the layer it was in: each middleware, URL resolving, DRF's dispatch,
authentication, throttling, parser, negotiation, the view's own code, serializers, rendering, the ORM, the
database. Prints, per layer, its share of the samples and the microseconds per request that share stands for.

    .venv/bin/python benchmarks/profile.py [--databases sqlite,postgres] [--seconds 15] [--rate 400]
                                           [--endpoints modes,change] [--stacks-dir DIR]

Needs wrk and py-spy (`pip install -r benchmarks/requirements.txt`), and the right to trace a process (root,
or ptrace allowed).
"""

import argparse
import collections
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import BIN, Endpoint, Servers, change_bodies, drop_databases, project_and_reference, run_wrk

# (layer, pattern over one frame "function (file:line)"). A sample belongs to the innermost frame that matches.
LAYERS = [
    ("database", r"psycopg|sqlite3|django/db/backends/|CursorWrapper|close_if_health_check_failed"),
    ("ORM (building queries, rows to objects)", r"django/db/models/"),
    ("rendering", r"rest_framework/renderers\.py|rendered_content|django/template/response\.py"),
    ("serializers", r"rest_framework/serializers\.py|rest_framework/fields\.py|/serializers\.py"),
    ("parser", r"rest_framework/parsers\.py|Request\._parse|Request\._load_data_and_files|Request\.data"),
    ("negotiation", r"rest_framework/negotiation\.py|perform_content_negotiation"),
    ("authentication", r"rest_framework/authentication\.py|accounts/authentication\.py|perform_authentication"),
    ("throttling", r"rest_framework/throttling\.py|aptix_site/throttling\.py|check_throttles|django/core/cache/"),
    ("permissions", r"check_permissions|rest_framework/permissions\.py"),
    ("the view's own code", r"\((modes|sessions_app|agent_api|agent_tools|mcp_server|accounts)/"),
    ("DRF dispatch (views, request, response)", r"rest_framework/"),
    ("URL resolving", r"django/urls/"),
    ("signals (request started/finished)", r"django/dispatch/|close_old_connections"),
    *(
        (f"middleware: {name}", rf"{name}\.")
        for name in (
            "SecurityMiddleware", "WhiteNoiseMiddleware", "RequestBodyLimitMiddleware",
            "RejectNulCharactersMiddleware", "SessionMiddleware", "CommonMiddleware", "CsrfViewMiddleware",
            "AuthenticationMiddleware", "MessageMiddleware", "XFrameOptionsMiddleware", "AxesMiddleware",
        )
    ),
    ("middleware plumbing", r"django/utils/deprecation\.py|django/core/handlers/exception\.py"),
    ("request and response objects, WSGI", r"django/core/handlers/|django/http/|process_environment"),
    ("server (Granian)", r"granian/"),
]
COMPILED = [(name, re.compile(pattern)) for name, pattern in LAYERS]
SERVING_THREAD = "_callback_wrapper.<locals>._runner"  # Granian's frame under each request the thread serves


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument("--endpoints", default=",".join(ENDPOINTS), help=f"Some of {', '.join(ENDPOINTS)}.")
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--rate", type=int, default=400, help="py-spy samples per second.")
    parser.add_argument("--stacks-dir", help="Keep py-spy's raw stacks here (for a flame graph).")
    options = parser.parse_args()
    for database in options.databases.split(","):
        with tempfile.TemporaryDirectory() as workdir:
            try:
                targets, fixtures = project_and_reference(database, Path(workdir), GRANIAN_BLOCKING_THREADS="1")
                with Servers(targets, workers=1) as servers:
                    for name in options.endpoints.split(","):
                        endpoint = ENDPOINTS[name](fixtures[ENDPOINTS[name](fixtures["project"]).target])
                        _profile(servers, endpoint, fixtures[endpoint.target], database, options)
            finally:
                drop_databases(database)


# The endpoints that can be profiled, each made from its target's fixture.
ENDPOINTS = {
    "modes": lambda fixture: Endpoint("GET /api/modes/", "project", "GET", "/api/modes/"),
    "list-modes": lambda fixture: Endpoint(
        "agent_list_modes", "project", "POST", "/api/tools/agent_list_modes/invoke/", ('{"arguments": {}}',)
    ),
    "context": lambda fixture: Endpoint(
        "session context", "project", "GET", f"/api/sessions/{fixture['session']}/context/"
    ),
    "change": lambda fixture: Endpoint(
        "agent_change_mode", "project", "POST", "/api/tools/agent_change_mode/invoke/", change_bodies(fixture["session"])
    ),
    "in-stack": lambda fixture: Endpoint("diagnostic: in-stack DRF view", "project", "GET", "/bench/drf/"),
    "ref-constant": lambda fixture: Endpoint("ref: constant DRF view", "reference", "GET", "/constant/"),
    "ref-update": lambda fixture: Endpoint(
        "ref: durable UPDATE", "reference", "POST", "/update/", change_bodies(fixture["session"])
    ),
}


def _profile(servers, endpoint, fixture, database, options):
    worker = servers.worker_pids(endpoint.target)[0]
    directory = Path(options.stacks_dir or tempfile.mkdtemp())
    directory.mkdir(parents=True, exist_ok=True)
    stacks = directory / f"{database}-{endpoint.target}-{endpoint.path.strip('/').replace('/', '-')}.txt"
    base = servers.bases[endpoint.target]
    run_wrk(base + endpoint.path, endpoint, fixture["token"], duration=3, connections=4)  # warm up
    spy = subprocess.Popen(
        [str(BIN / "py-spy"), "record", "--pid", str(worker), "--idle", "--threads", "--nonblocking",
         "--rate", str(options.rate), "--duration", str(options.seconds), "--format", "raw", "--output", str(stacks)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    time.sleep(0.5)
    # Four connections keep the one thread busy: it always has a request waiting.
    load = run_wrk(base + endpoint.path, endpoint, fixture["token"], duration=options.seconds - 1, connections=4)
    spy.wait(timeout=options.seconds + 30)
    shares = _layer_shares(stacks.read_text())
    per_request_us = 1e6 / load["rps"]
    total = sum(shares.values())
    print(f"\n[{database}] {endpoint.label}: {load['rps']:.0f} requests/s on one thread, "
          f"{per_request_us:.0f} us per request; {total} samples")
    for layer, samples in sorted(shares.items(), key=lambda item: -item[1]):
        print(f"  {layer:<44}{samples / total:>7.1%}{samples / total * per_request_us:>8.0f} us")


def _layer_shares(raw: str) -> collections.Counter:
    """Samples by layer, counting only the thread that serves requests (the worker's main thread only waits)."""
    by_thread = collections.defaultdict(list)
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        thread, _, frames = stack.partition(";")  # --threads puts the thread first
        by_thread[thread].append((frames.split(";") if frames else [], int(count)))
    shares = collections.Counter()
    for samples in by_thread.values():
        if any(SERVING_THREAD in frame for frames, _ in samples for frame in frames):
            for frames, count in samples:
                # No Python frame: the thread is in Granian's own code, reading a request or writing an answer.
                shares[_layer(frames) if frames else "server (Granian)"] += count
    return shares


def _layer(frames) -> str:
    for frame in reversed(frames):
        for name, pattern in COMPILED:
            if pattern.search(frame):
                return name
    return "other"


if __name__ == "__main__":
    sys.exit(main())
