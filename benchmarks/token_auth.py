"""
What an API token costs per request, in-process: our lookup (accounts.authentication, one query) against
knox's own TokenAuthentication (knox.auth) on the same token table, as the authentication step alone and as a
whole GET /api/modes/ through Django's test client. Prints µs per request (best of ROUNDS × REQUESTS) and the
queries each makes. On a scratch test database of the configured one (DATABASE_URL, or SQLite in memory):

    SECRET_KEY=x SECURE_SSL_REDIRECT=0 [DATABASE_URL=postgres://...] .venv/bin/python -m benchmarks.token_auth
"""

import os
import time

import django

ROUNDS = 5
REQUESTS = 1000


def best_microseconds(call) -> float:
    """The best of ROUNDS rounds of REQUESTS calls, in µs per call."""
    best = float("inf")
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for _ in range(REQUESTS):
            call()
        best = min(best, (time.perf_counter() - started) / REQUESTS * 1e6)
    return best


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aptix_site.settings")
    django.setup()

    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment
    from knox.auth import TokenAuthentication as KnoxTokenAuthentication
    from rest_framework.request import Request
    from rest_framework.test import APIRequestFactory

    from accounts.tokens import create_token
    from accounts.authentication import StrictTokenAuthentication
    from modes.views import ModeListView

    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0)
    try:
        user = get_user_model().objects.create_user("bench")
        _, key = create_token(user=user, name="bench")
        header = f"Token {key}"
        request = Request(APIRequestFactory().get("/api/modes/", HTTP_AUTHORIZATION=header))
        client = Client(HTTP_AUTHORIZATION=header)
        print(f"{connection.vendor}: µs per request, best of {ROUNDS} x {REQUESTS}; queries per request")
        for label, authentication in (("ours", StrictTokenAuthentication), ("knox", KnoxTokenAuthentication)):
            ModeListView.authentication_classes = [authentication]
            assert client.get("/api/modes/").status_code == 200  # the catalog snapshot and the last use, once
            with CaptureQueriesContext(connection) as authenticating:
                authentication().authenticate(request)
            with CaptureQueriesContext(connection) as requesting:
                assert client.get("/api/modes/").status_code == 200
            # Counted now: every request the test client makes empties the connection's query log.
            queries = (len(authenticating), len(requesting))
            alone = best_microseconds(lambda: authentication().authenticate(request))
            whole = best_microseconds(lambda: client.get("/api/modes/"))
            print(
                f"  {label}: authentication {alone:6.0f} µs, {queries[0]} queries; "
                f"GET /api/modes/ {whole:6.0f} µs, {queries[1]} queries"
            )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
