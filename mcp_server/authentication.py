"""MCP clients send the API token as a bearer token (Authorization: Bearer <token>); a 401 says so."""

from aptix_site.authentication import StrictTokenAuthentication


class BearerTokenAuthentication(StrictTokenAuthentication):
    keyword = "Bearer"
