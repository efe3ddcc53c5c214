"""
The benchmark harness: Aptix Modes' endpoints against a reference project that shares none of its code
(benchmarks/reference: DRF, TokenAuthentication, the Security and Common middleware), both served by `make
serve` with the same worker count, each on its own database on the same database server, measured in the same
run. The machine is shared and its speed drifts from one minute to the next, so each ratio is taken between two
measurements made back to back: every round measures, for every ratio, the reference and then the endpoint
(the endpoint first in every other round, so that drift favours neither side). A budget is met when the
median round's ratio reaches it.

    make bench BENCH_ARGS="..."   or   .venv/bin/python -m benchmarks.run [--rounds 5] [--duration 3]
        [--connections 16] [--workers N] [--databases sqlite,postgres] [--suite budgets|servers]

`--suite servers` instead serves the app two ways at once, `make serve` and Granian alone, and shows what the
nginx in front costs in throughput. (It also measured gunicorn's sync workers, the setup before, until gunicorn
left the project: benchmarks/RESULTS.md keeps those runs.)

It prints requests/s, p50 and p99 latency for every measurement in every round, then each database's table
(the median of every measurement of each) and the ratios, round by round, and exits 1 if a budget is missed or
any answer was not a success.
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
from statistics import median_high

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
    parser.add_argument("--rounds", type=int, default=5, help="Rounds; each ratio is its median round's.")
    parser.add_argument("--duration", type=int, default=3, help="Seconds per measurement.")
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
        targets = {kind: (project_env, kind) for kind in ("make-serve", "granian")}
        fixtures = dict.fromkeys(targets, fixture)
        endpoints, budgets = _server_comparison(fixture)
    else:
        targets, fixtures = project_and_reference(database, workdir)
        endpoints, budgets = _budget_suite(fixtures["project"], fixtures["reference"])
    with Servers(targets, options.workers) as servers:
        pairs = _measure(servers.bases, {endpoint.label: endpoint for endpoint in endpoints}, budgets, fixtures,
                         database, options)
    print()
    print(_table(database, endpoints, budgets, pairs))
    return _judge(database, budgets, pairs)


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
        # Issue 38's budgets: the ORM on every path, plain DRF, no second implementation for speed.
        Budget(modes.label, "ref: constant DRF view", 0.75),
        Budget(modes.label, "ref: naive ListAPIView", 1.3),
        Budget(list_modes.label, "ref: constant DRF view", 0.75),
        Budget(list_modes.label, "ref: naive ListAPIView", 1.3),
        Budget(context.label, "ref: constant DRF view", 0.75),
        Budget(change.label, "ref: durable UPDATE", 0.8),
        Budget(change.label, "ref: naive ORM change", 1.0),
        Budget("MCP tools/call agent_list_modes", list_modes.label, 0.8),
        Budget("diagnostic: in-stack DRF view", "ref: constant DRF view", None),
    ]
    return endpoints, budgets


def _server_comparison(fixture):
    endpoints, budgets = [], []
    for served in _project_endpoints(fixture, "make-serve"):
        endpoints.append(served)
        alone = Endpoint(f"{served.label} [granian]", "granian", served.method, served.path, served.bodies)
        endpoints.append(alone)
        budgets.append(Budget(served.label, alone.label, None))
    return endpoints, budgets


def _measure(bases, endpoints, budgets, fixtures, database, options) -> list[list[tuple[dict, dict]]]:
    """Every round: for each ratio, its reference and its endpoint back to back. For each budget, its pairs."""
    pairs = [[] for _ in budgets]
    for round_number in range(options.rounds):
        for budget, measured in zip(budgets, pairs):
            order = (budget.reference, budget.endpoint) if round_number % 2 == 0 else (budget.endpoint, budget.reference)
            results = {}
            for label in order:
                endpoint = endpoints[label]
                results[label] = result = run_wrk(
                    bases[endpoint.target] + endpoint.path, endpoint, fixtures[endpoint.target]["token"],
                    duration=options.duration, connections=options.connections, warm_up=round_number == 0,
                )
                print(
                    f"[{database}] round {round_number + 1}: {label:<38}{result['rps']:>8.0f}/s "
                    f"p50 {result['p50_ms']:.2f} ms p99 {result['p99_ms']:.2f} ms"
                    + (f"  NON-2xx: {result['errors']}" if result["errors"] else ""),
                    flush=True,
                )
            measured.append((results[budget.endpoint], results[budget.reference]))
    return pairs


# --- Reporting -------------------------------------------------------------------------------------------------


def _table(database, endpoints, budgets, pairs):
    """Each endpoint's and reference's measurements, all rounds and pairs together: median req/s, p50, p99."""
    samples = {endpoint.label: [] for endpoint in endpoints}
    for budget, measured in zip(budgets, pairs):
        for mine, theirs in measured:
            samples[budget.endpoint].append(mine)
            samples[budget.reference].append(theirs)
    header = f"{'db':<9}{'endpoint':<42}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'non-2xx':>9}"
    lines = [header, "-" * len(header)]
    for endpoint in endpoints:
        results = samples[endpoint.label]
        lines.append(
            f"{database:<9}{endpoint.label:<42}{median_high(r['rps'] for r in results):>9.0f}"
            f"{median_high(r['p50_ms'] for r in results):>9.2f}{median_high(r['p99_ms'] for r in results):>9.2f}"
            f"{sum(r['errors'] for r in results):>9}"
        )
    return "\n".join(lines)


def _judge(database, budgets, pairs) -> list[str]:
    """Prints each ratio, round by round; returns what failed: a missed budget, or answers that were not 2xx."""
    failures = []
    print()
    for budget, measured in zip(budgets, pairs):
        errors = sum(mine["errors"] + theirs["errors"] for mine, theirs in measured)
        if errors:
            failures.append(f"[{database}] {budget.endpoint} / {budget.reference}: {errors} answers were not 2xx")
        ratios = [mine["rps"] / theirs["rps"] for mine, theirs in measured]
        median = median_high(ratios)
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
