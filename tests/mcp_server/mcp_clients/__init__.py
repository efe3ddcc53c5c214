"""
Scripts that drive a live server with the MCP clients people run, each in a virtualenv of its own
(tests/mcp_server/client_venvs.py builds them from the pins beside the scripts); tests/mcp_server/test_clients.py runs them.
"""
