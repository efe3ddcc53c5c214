"""The server process's environment (SECRET_KEY, DATABASE_URL) never reaches a request's META under make serve."""

import os

from aptix_site.process_environment import WithoutProcessEnvironment


def test_the_process_environment_is_taken_out_of_each_request_and_the_requests_own_keys_kept(monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "do-not-leak")
    monkeypatch.setenv("DATABASE_URL", "postgres://user:password@db/modes")
    seen = {}

    def app(environ, start_response):
        seen.update(environ)
        return [b""]

    wrapped = WithoutProcessEnvironment(app)
    # What Granian hands the app: the process's variables, then the request's own.
    environ = {**os.environ, "REQUEST_METHOD": "GET", "PATH_INFO": "/api/modes/", "HTTP_HOST": "x", "wsgi.input": None}
    wrapped(environ, lambda status, headers: None)
    assert "SECRET_KEY" not in seen and "DATABASE_URL" not in seen
    assert not set(os.environ) & set(seen) - {"REQUEST_METHOD", "PATH_INFO", "HTTP_HOST"}
    assert (seen["REQUEST_METHOD"], seen["PATH_INFO"], seen["HTTP_HOST"]) == ("GET", "/api/modes/", "x")
