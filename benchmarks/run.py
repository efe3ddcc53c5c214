"""
Benchmark harness. For each database (SQLite, PostgreSQL) it migrates a fresh
database, serves the app as deployed (`make serve`: Granian, one worker per core;
production settings; `--server gunicorn` for the former sync setup,
gunicorn.conf.py), drives it from loopback with wrk, and
prints requests/s and p50/p99 latency per endpoint. Two baselines run in the
same pass: a DRF view with the same token authentication returning a constant
JSON, and a plain Django view returning constant bytes; each endpoint's
throughput is shown as a ratio to the DRF one. A tools/call of agent_list_modes
over MCP is also shown as a ratio to the same call over REST, round by round.
The machine is shared and noisy, so every endpoint is measured in several
rounds, each right after a slice of the DRF baseline, and the table shows its
median round. Then the catalog is grown to 1,000 modes and the listing is
measured again.

    .venv/bin/python benchmarks/run.py [--duration 2] [--rounds 5] [--connections 16] [--workers N]
                                       [--databases sqlite,postgres] [--server make-serve|gunicorn]

Needs wrk (Debian package `wrk`). Traffic goes to 127.0.0.1 only and every run
is bounded by --duration.
"""

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PG_ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres"
PG_BENCH_DB = "aptix_modes_bench"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=int, default=2, help="Seconds per endpoint (and its baseline) per round.")
    parser.add_argument("--rounds", type=int, default=5, help="Rounds; each endpoint's median round is shown.")
    parser.add_argument("--connections", type=int, default=16, help="Concurrent wrk connections.")
    parser.add_argument("--workers", type=int, help="Worker processes; by default one per core.")
    parser.add_argument(
        "--server", choices=["make-serve", "gunicorn"], default="make-serve",
        help="make serve (Granian), or gunicorn's sync workers as served before.",
    )
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument("--large-catalog", type=int, default=1000, help="Modes in the large-catalog pass.")
    options = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is not installed: apt-get install wrk")

    rows, pairs = [], []
    for database in options.databases.split(","):
        with tempfile.TemporaryDirectory() as workdir:
            env = _environment(database, Path(workdir))
            _run([BIN / "python", "manage.py", "migrate", "--noinput", "-v0"], env)
            fixture = _prepare(env, "--user")
            print(f"[{database}] in-process, {fixture['modes']} modes: {_timings(fixture)}", flush=True)
            with _server(env, options.workers, options.server) as base:
                measured = _measure_all(base, fixture, database, options)
                rows += measured
                pairs += _paired_ratios(measured, database)
                large = _prepare(env, "--modes", str(options.large_catalog))
                print(f"[{database}] in-process, {large['modes']} modes: {_timings(large)}", flush=True)
                rows += _measure_large_catalog(base, fixture, database, options, large["modes"])
            if database == "postgres":
                _drop_postgres_database()
    print()
    print(_table(rows))
    print()
    print("\n".join(pairs))


def _environment(database, workdir):
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "DEBUG", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(
        DJANGO_SETTINGS_MODULE="benchmarks.settings",
        SECRET_KEY=secrets.token_urlsafe(50),
        SECURE_SSL_REDIRECT="0",  # plain HTTP on loopback
        TOOL_INVOKE_RATE="1000000/s",  # never refuse; per second, so the throttle keeps a production-sized history
        PYTHONPATH=str(ROOT),
    )
    if database == "sqlite":
        env["DATABASE_URL"] = f"sqlite:///{workdir / 'bench.sqlite3'}"
    elif database == "postgres":
        _drop_postgres_database()
        _psql(f"CREATE DATABASE {PG_BENCH_DB}")
        env["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{PG_BENCH_DB}"
    else:
        sys.exit(f"unknown database {database!r}: use sqlite and/or postgres")
    return env


def _psql(statement):
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as connection:
        connection.execute(statement)


def _drop_postgres_database():
    _psql(f"DROP DATABASE IF EXISTS {PG_BENCH_DB} WITH (FORCE)")


def _run(command, env):
    subprocess.run([str(part) for part in command], cwd=ROOT, env=env, check=True, timeout=300)


def _prepare(env, *arguments):
    output = subprocess.run(
        [str(BIN / "python"), "-m", "benchmarks.prepare", *arguments],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=300,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def _timings(fixture):
    return ", ".join(
        f"{name} {fixture[name]:.3f} ms" for name in ("build_system_prompt_ms", "filtered_listing_ms", "full_listing_ms")
    )


class _server:
    """The app served on a free loopback port, by `make serve` or by gunicorn's sync workers; stopped on exit."""

    def __init__(self, env, workers, server):
        self.env = env
        self.workers = workers
        self.server = server

    def _command(self, port):
        if self.server == "gunicorn":
            return [str(BIN / "gunicorn"), "aptix_site.wsgi", "--bind", f"127.0.0.1:{port}", "--log-level", "warning",
                    *(["--workers", str(self.workers)] if self.workers is not None else [])]
        return ["make", "-s", "serve", "HOST=127.0.0.1", f"PORT={port}", f"PYTHON={sys.executable}",
                *([f"WORKERS={self.workers}"] if self.workers is not None else [])]

    def __enter__(self):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.process = subprocess.Popen(
            self._command(port), cwd=ROOT, env=self.env, start_new_session=True  # make's children stop with it
        )
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{base}/bench/plain/", timeout=1)
                return base
            except OSError:
                if self.process.poll() is not None:
                    raise SystemExit(f"{self.server} exited before serving") from None
                time.sleep(0.2)
        os.killpg(self.process.pid, signal.SIGKILL)
        raise SystemExit(f"{self.server} did not start within 30 s")

    def __exit__(self, *exc):
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)


BASELINE_DRF = ("DRF + token auth (baseline)", "GET", "/bench/drf/", None)


def _endpoints(fixture):
    session = fixture["session"]
    change_bodies = [
        json.dumps({"sessionId": session, "arguments": {"mode": mode, "branch": False, "reason": "Benchmark."}})
        for mode in ("ddr_authoring", "general")
    ]
    return [
        ("plain Django view (baseline)", "GET", "/bench/plain/", None),
        BASELINE_DRF,
        ("GET /api/modes/", "GET", "/api/modes/", None),
        ("POST agent_list_modes", "POST", "/api/tools/agent_list_modes/invoke/", [json.dumps({"arguments": {}})]),
        ("GET /api/sessions/<id>/context/", "GET", f"/api/sessions/{session}/context/", None),
        ("POST agent_change_mode", "POST", "/api/tools/agent_change_mode/invoke/", change_bodies),
        (MCP_LIST_MODES, "POST", "/mcp/", [MCP_CALL_BODY]),
    ]


MCP_LIST_MODES = "MCP tools/call agent_list_modes"
MCP_CALL_BODY = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "agent_list_modes", "arguments": {}}}
)
# (endpoint, the endpoint it is compared with round by round, the goal for the ratio of their throughputs)
PAIRED = [(MCP_LIST_MODES, "POST agent_list_modes", 0.8)]


def _paired_ratios(rows, database):
    by_label = {row["endpoint"]: row for row in rows}
    lines = []
    for label, reference, goal in PAIRED:
        ratios = sorted(a["rps"] / b["rps"] for a, b in zip(by_label[label]["rounds"], by_label[reference]["rounds"]))
        median = ratios[len(ratios) // 2]
        lines.append(
            f"[{database}] {label} / {reference}: x{median:.2f} (rounds {', '.join(f'{r:.2f}' for r in ratios)}; "
            f"goal {goal}: {'met' if median >= goal else 'NOT met'})"
        )
    return lines


def _measure_all(base, fixture, database, options):
    return _measure_in_rounds(base, fixture, database, options, _endpoints(fixture))


def _measure_large_catalog(base, fixture, database, options, modes):
    endpoints = [BASELINE_DRF, (f"GET /api/modes/ ({modes} modes)", "GET", "/api/modes/", None)]
    return _measure_in_rounds(base, fixture, database, options, endpoints)[1:]


def _measure_in_rounds(base, fixture, database, options, endpoints):
    """
    Each endpoint once per round, right after a slice of the DRF baseline: its ratio is taken against
    that neighbouring baseline, since the shared machine's speed drifts from one minute to the next.
    The table shows each endpoint's median round.
    """
    samples = {label: [] for label, *_ in endpoints}
    for round_number in range(options.rounds):
        for label, method, path, bodies in endpoints:
            if label == BASELINE_DRF[0]:
                continue
            warm_up = round_number == 0
            baseline = _wrk(base + BASELINE_DRF[2], "GET", None, fixture, options, warm_up=warm_up)
            result = _wrk(base + path, method, bodies, fixture, options, warm_up=warm_up)
            samples[BASELINE_DRF[0]].append({**baseline, "ratio": 1.0})
            samples[label].append({**result, "ratio": result["rps"] / baseline["rps"]})
            print(
                f"[{database}] round {round_number + 1}: {label}: {result['rps']:.0f}/s "
                f"(baseline {baseline['rps']:.0f}/s, x{samples[label][-1]['ratio']:.2f})",
                flush=True,
            )
    return [
        {"db": database, "endpoint": label, **_median_round(results), "rounds": results}
        for label, results in samples.items()
    ]


def _median_round(results):
    by_ratio = sorted(results, key=lambda result: (result["ratio"], result["rps"]))
    return {**by_ratio[len(by_ratio) // 2], "errors": sum(result["errors"] for result in results)}


def _wrk(url, method, bodies, fixture, options, *, warm_up):
    mcp = url.endswith("/mcp/")
    script = [
        # An MCP client sends the API token as a bearer token, and accepts JSON or an event stream.
        f'wrk.headers["Authorization"] = "{"Bearer" if mcp else "Token"} %s"' % fixture["token"],
        *(['wrk.headers["Accept"] = "application/json, text/event-stream"'] if mcp else []),
        'wrk.headers["Content-Type"] = "application/json"',
    ]
    if bodies:
        quoted = ", ".join("[[%s]]" % body for body in bodies)
        script += [
            f"local bodies = {{{quoted}}}",
            "local n = 0",
            "request = function()",
            "  n = n + 1",
            f'  return wrk.format("{method}", nil, nil, bodies[(n % #bodies) + 1])',
            "end",
        ]
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
        lua.write("\n".join(script) + "\n")
    try:
        command = ["wrk", "-t2", f"-c{options.connections}", "--latency", "-s", lua.name, url]
        if warm_up:
            subprocess.run([*command[:-1], "-d1s", url], capture_output=True, timeout=30, check=True)
        output = subprocess.run(
            [*command[:-1], f"-d{options.duration}s", url],
            capture_output=True,
            text=True,
            timeout=options.duration + 30,
            check=True,
        ).stdout
    finally:
        os.unlink(lua.name)
    return _parse_wrk(output)


def _parse_wrk(output):
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    return {
        "rps": rps,
        "p50_ms": _milliseconds(re.search(r"^\s+50%\s+(\S+)", output, re.M).group(1)),
        "p99_ms": _milliseconds(re.search(r"^\s+99%\s+(\S+)", output, re.M).group(1)),
        "errors": int(errors.group(1)) if errors else 0,
    }


def _milliseconds(text):
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[unit]


def _table(rows):
    header = f"{'db':<9}{'endpoint':<38}{'req/s':>9}{'x DRF':>8}{'p50 ms':>9}{'p99 ms':>9}{'non-2xx':>9}"
    lines = [header, "-" * len(header)]
    for row in rows:
        lines.append(
            f"{row['db']:<9}{row['endpoint']:<38}{row['rps']:>9.0f}{row['ratio']:>8.2f}"
            f"{row['p50_ms']:>9.2f}{row['p99_ms']:>9.2f}{row['errors']:>9}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
