"""
The benchmark harness: Aptix Modes' endpoints against a reference project that shares none of its code
(benchmarks/reference: DRF, TokenAuthentication, the Security and Common middleware), both served by `make
serve` with the same worker count, each on its own database on the same database server, measured in the same
run. Every round measures every endpoint and every reference once, one after the other (the order reversed
every other round, so that a drifting machine favours neither side); each budget is the ratio of an endpoint's
requests/s to its reference's in the same round, and the median round's ratio must reach the budget.

    .venv/bin/python benchmarks/run.py [--rounds 3] [--duration 5] [--connections 16] [--workers N]
                                       [--databases sqlite,postgres] [--suite budgets|servers]

`--suite servers` instead serves the app three ways at once, `make serve`, gunicorn's sync workers
(gunicorn.conf.py, the setup before it) and Granian alone, and shows `make serve`'s throughput against each.

It prints requests/s, p50 and p99 latency for every measurement in every round, then each database's table
(the median round of each) and the ratios, and exits 1 if a budget is missed or any answer was not a success.
Needs wrk (Debian package `wrk`). Traffic goes to 127.0.0.1 only, and every measurement is bounded.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.harness import (
    Endpoint,
    Servers,
    change_bodies,
    commit,
    drop_databases,
    prepare_project,
    project_and_reference,
    project_environment,
    run_wrk,
)


@dataclass(frozen=True)
class Budget:
    endpoint: str
    reference: str
    at_least: float | None  # None: a ratio shown for information, not a budget


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="Rounds; each ratio is its median round's.")
    parser.add_argument("--duration", type=int, default=5, help="Seconds per measurement.")
    parser.add_argument("--connections", type=int, default=16, help="Concurrent wrk connections.")
    parser.add_argument("--workers", type=int, help="Worker processes of each server; by default one per core.")
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument("--suite", choices=["budgets", "servers"], default="budgets")
    options = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is not installed: apt-get install wrk")

    print(f"{time.strftime('%Y-%m-%d %H:%M %Z')}; {os.cpu_count()} cores; {commit()}; run.py {' '.join(sys.argv[1:])}")
    failures = []
    for database in options.databases.split(","):
        with tempfile.TemporaryDirectory() as workdir:
            try:
                failures += _run_database(database, Path(workdir), options)
            finally:
                drop_databases(database)
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("\nEvery budget met.")


def _run_database(database, workdir, options) -> list[str]:
    if options.suite == "servers":
        project_env = project_environment(database, workdir)
        fixture = prepare_project(project_env)
        targets = {kind: (project_env, kind) for kind in ("make-serve", "gunicorn", "granian")}
        fixtures = dict.fromkeys(targets, fixture)
        endpoints, budgets = _server_comparison(fixture)
    else:
        targets, fixtures = project_and_reference(database, workdir)
        endpoints, budgets = _budget_suite(fixtures["project"], fixtures["reference"])
    with Servers(targets, options.workers) as servers:
        samples = _measure(servers.bases, endpoints, fixtures, database, options)
    print()
    print(_table(database, endpoints, samples))
    return _judge(database, budgets, samples)


# --- What is measured ------------------------------------------------------------------------------------------

MCP_CALL = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "agent_list_modes", "arguments": {}}}
)


def _project_endpoints(fixture, target):
    session = fixture["session"]
    return [
        Endpoint("GET /api/modes/", target, "GET", "/api/modes/"),
        Endpoint(
            "agent_list_modes", target, "POST", "/api/tools/agent_list_modes/invoke/", (json.dumps({"arguments": {}}),)
        ),
        Endpoint("session context", target, "GET", f"/api/sessions/{session}/context/"),
        Endpoint("agent_change_mode", target, "POST", "/api/tools/agent_change_mode/invoke/", change_bodies(session)),
    ]


def _budget_suite(fixture, reference):
    modes, list_modes, context, change = _project_endpoints(fixture, "project")
    endpoints = [
        Endpoint("ref: constant DRF view", "reference", "GET", "/constant/"),
        modes,
        list_modes,
        context,
        Endpoint("ref: naive ListAPIView", "reference", "GET", "/modes/"),
        Endpoint("ref: durable UPDATE", "reference", "POST", "/update/", change_bodies(reference["session"])),
        change,
        Endpoint("ref: naive ORM change", "reference", "POST", "/change-mode/", change_bodies(reference["session"])),
        Endpoint("MCP tools/call agent_list_modes", "project", "POST", "/mcp/", (MCP_CALL,)),
        Endpoint("diagnostic: in-stack DRF view", "project", "GET", "/bench/drf/"),
    ]
    budgets = [
        Budget(modes.label, "ref: constant DRF view", 0.9),
        Budget(modes.label, "ref: naive ListAPIView", 1.5),
        Budget(list_modes.label, "ref: constant DRF view", 0.9),
        Budget(list_modes.label, "ref: naive ListAPIView", 1.5),
        Budget(context.label, "ref: constant DRF view", 0.85),
        Budget(change.label, "ref: durable UPDATE", 0.8),
        Budget(change.label, "ref: naive ORM change", 1.3),
        Budget("MCP tools/call agent_list_modes", list_modes.label, 0.8),
        Budget("diagnostic: in-stack DRF view", "ref: constant DRF view", None),
    ]
    return endpoints, budgets


def _server_comparison(fixture):
    endpoints, budgets = [], []
    for served in _project_endpoints(fixture, "make-serve"):
        endpoints.append(served)
        for former in ("gunicorn", "granian"):
            other = Endpoint(f"{served.label} [{former}]", former, served.method, served.path, served.bodies)
            endpoints.append(other)
            budgets.append(Budget(served.label, other.label, None))
    return endpoints, budgets


def _measure(bases, endpoints, fixtures, database, options):
    samples = {endpoint.label: [] for endpoint in endpoints}
    for round_number in range(options.rounds):
        for endpoint in endpoints if round_number % 2 == 0 else endpoints[::-1]:
            result = run_wrk(
                bases[endpoint.target] + endpoint.path, endpoint, fixtures[endpoint.target]["token"],
                duration=options.duration, connections=options.connections, warm_up=round_number == 0,
            )
            samples[endpoint.label].append(result)
            print(
                f"[{database}] round {round_number + 1}: {endpoint.label:<38}{result['rps']:>8.0f}/s "
                f"p50 {result['p50_ms']:.2f} ms p99 {result['p99_ms']:.2f} ms"
                + (f"  NON-2xx: {result['errors']}" if result["errors"] else ""),
                flush=True,
            )
    return samples


# --- Reporting -------------------------------------------------------------------------------------------------


def _median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def _table(database, endpoints, samples):
    header = f"{'db':<9}{'endpoint':<42}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'non-2xx':>9}"
    lines = [header, "-" * len(header)]
    for endpoint in endpoints:
        rounds = samples[endpoint.label]
        lines.append(
            f"{database:<9}{endpoint.label:<42}{_median(r['rps'] for r in rounds):>9.0f}"
            f"{_median(r['p50_ms'] for r in rounds):>9.2f}{_median(r['p99_ms'] for r in rounds):>9.2f}"
            f"{sum(r['errors'] for r in rounds):>9}"
        )
    return "\n".join(lines)


def _judge(database, budgets, samples) -> list[str]:
    """Prints each ratio, round by round; returns what failed: a missed budget, or answers that were not 2xx."""
    failures = [
        f"[{database}] {label}: {sum(r['errors'] for r in rounds)} answers were not 2xx"
        for label, rounds in samples.items()
        if any(r["errors"] for r in rounds)
    ]
    print()
    for budget in budgets:
        ratios = [mine["rps"] / theirs["rps"] for mine, theirs in zip(samples[budget.endpoint], samples[budget.reference])]
        median = _median(ratios)
        verdict = "" if budget.at_least is None else (
            f"  budget {budget.at_least}: {'met' if median >= budget.at_least else 'MISSED'}"
        )
        line = (
            f"[{database}] {budget.endpoint} / {budget.reference}: x{median:.2f} "
            f"(rounds {', '.join(f'{r:.2f}' for r in ratios)}){verdict}"
        )
        print(line)
        if budget.at_least is not None and median < budget.at_least:
            failures.append(line)
    return failures


if __name__ == "__main__":
    main()
