"""MCP clients send the API token as a bearer token (Authorization: Bearer <token>); a 401 says so."""

from accounts.authentication import StrictTokenAuthentication


class BearerTokenAuthentication(StrictTokenAuthentication):
    keyword = "Bearer"
