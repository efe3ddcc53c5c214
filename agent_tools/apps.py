from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules


class AgentToolsConfig(AppConfig):
    name = "agent_tools"

    def ready(self):
        # Each app's tools.py registers its tools; a malformed one raises ImproperlyConfigured, so nothing starts.
        autodiscover_modules("tools")
