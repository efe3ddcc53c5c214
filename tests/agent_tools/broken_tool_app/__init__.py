"""A test-only app that registers a tool breaking the TUL-011 contract (see tests/agent_tools/broken_tool_settings.py)."""
