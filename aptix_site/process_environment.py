"""Granian starts each request's WSGI environ from the server process's environment, so SECRET_KEY and DATABASE_URL
would be in every request.META, and in anything that ever shows it. This wrapper takes the process's variables back
out; the request's own keys (CGI's, HTTP_*, wsgi.*) are kept."""

import os

CGI_KEYS = {
    "REQUEST_METHOD", "SCRIPT_NAME", "PATH_INFO", "QUERY_STRING", "CONTENT_TYPE", "CONTENT_LENGTH", "SERVER_NAME",
    "SERVER_PORT", "SERVER_PROTOCOL", "REMOTE_ADDR", "REMOTE_HOST", "REMOTE_PORT", "REMOTE_USER", "AUTH_TYPE",
    "GATEWAY_INTERFACE", "RAW_URI", "REQUEST_URI",
}


class WithoutProcessEnvironment:
    def __init__(self, app):
        self.app = app
        self.process_keys = tuple(key for key in os.environ if key not in CGI_KEYS and not key.startswith("HTTP_"))

    def __call__(self, environ, start_response):
        for key in self.process_keys:
            environ.pop(key, None)
        return self.app(environ, start_response)
