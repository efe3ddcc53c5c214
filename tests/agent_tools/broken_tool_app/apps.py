from django.apps import AppConfig


class BrokenToolAppConfig(AppConfig):
    name = "tests.agent_tools.broken_tool_app"
    label = "broken_tool_app"
