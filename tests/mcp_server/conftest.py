"""Fixtures of the MCP tests."""

import pytest


@pytest.fixture(scope="session")
def mcp_client_python():
    """
    mcp_client_python(name): the Python of a virtualenv holding an MCP client at pinned versions
    (tests/mcp_server/mcp_clients/requirements-<name>.txt), built on first use and cached outside the checkout.
    """
    from .client_venvs import client_python

    return client_python
