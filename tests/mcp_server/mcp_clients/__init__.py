"""
Scripts that drive a live server with the MCP clients people run, each in a virtualenv of its own
(tests/client_venvs.py builds them from the pins beside the scripts); tests/test_mcp_clients.py runs them.
"""
