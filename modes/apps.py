"""The modes app's start: it registers its system checks."""

from django.apps import AppConfig
from django.core import checks


class ModesConfig(AppConfig):
    name = "modes"
    verbose_name = "Agent modes"

    def ready(self):
        from .checks import check_mode_catalog
        from .graph_drawing import check_graphviz

        checks.register(check_mode_catalog, checks.Tags.database)
        checks.register(check_graphviz)
