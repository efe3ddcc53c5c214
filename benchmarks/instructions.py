"""
Instructions per request, for A/B decisions that a busy machine's wall clock cannot settle (benchmarks/RESULTS.md):
N agent_change_mode requests (or GET /api/modes/ ...) through the real WSGI handler, in this process, against a
prepared database. Run it under callgrind with N = 0 and N = 100; (Ir(100) - Ir(0)) / 100 is one request's
instructions, start-up and the first request's warm-up (one request before counting) set aside. Only this
process is counted: PostgreSQL's own work and the round trips are not (wall-clock figures say those).

    DATABASE_URL=... .venv/bin/python -m benchmarks.instructions prepare      # prints the fixture as JSON
    DATABASE_URL=... valgrind --tool=callgrind --callgrind-out-file=out.%p \\
        .venv/bin/python -m benchmarks.instructions run N '<fixture JSON>' [endpoint]

endpoint: change (agent_change_mode, the default), modes, list_modes, context, const (the in-stack constant view).
"""

import gc
import json
import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    os.environ.setdefault("SECRET_KEY", "benchmarks-only-not-a-secret")
    os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
    import django

    django.setup()
    if sys.argv[1] == "prepare":
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        from benchmarks.prepare import main as prepare

        prepare()
        return
    count, fixture = int(sys.argv[2]), json.loads(sys.argv[3])
    endpoint = sys.argv[4] if len(sys.argv) > 4 else "change"
    request = _requests(fixture)[endpoint]
    from django.test import Client

    client = Client(HTTP_AUTHORIZATION=f"Token {fixture['token']}", HTTP_HOST="127.0.0.1")
    for number in range(count + 1):  # one more: the first request warms what every later one reuses
        response = request(client, number)
        assert response.status_code == 200, response.content
        if number == 0:  # frozen as aptix_site.wsgi freezes a server's, or the collector's walks add noise
            gc.collect()
            gc.freeze()


def _requests(fixture):
    session = fixture["session"]

    def change(client, number):
        mode = ("ddr_authoring", "general")[number % 2]
        body = {"sessionId": session, "arguments": {"mode": mode, "branch": False, "reason": "Benchmark."}}
        return client.post("/api/tools/agent_change_mode/invoke/", json.dumps(body), content_type="application/json")

    return {
        "change": change,
        "modes": lambda client, number: client.get("/api/modes/"),
        "list_modes": lambda client, number: client.post(
            "/api/tools/agent_list_modes/invoke/", '{"arguments": {}}', content_type="application/json"
        ),
        "context": lambda client, number: client.get(f"/api/sessions/{session}/context/"),
        "const": lambda client, number: client.get("/bench/drf/"),  # the in-stack constant view
    }


if __name__ == "__main__":
    main()
