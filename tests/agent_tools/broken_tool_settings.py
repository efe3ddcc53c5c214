"""Settings for one test: the project's, plus an app whose tools.py registers a malformed tool.

Used by tests/agent_tools/test_registry.py, which runs ``django.setup()`` in a subprocess with these settings
and expects start-up to fail with ImproperlyConfigured naming the tool.
"""

from aptix_site.settings import *  # noqa: F401,F403
from aptix_site.settings import INSTALLED_APPS as _PROJECT_APPS

INSTALLED_APPS = [*_PROJECT_APPS, "tests.agent_tools.broken_tool_app"]
