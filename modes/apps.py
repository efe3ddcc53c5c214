"""The modes app's start: its checks and its signal receivers, each documented where it is defined."""

from django.apps import AppConfig
from django.core import checks
from django.db.models.signals import post_delete, post_migrate, post_save, pre_delete


class ModesConfig(AppConfig):
    name = "modes"
    verbose_name = "Agent modes"

    def ready(self):
        from .checks import check_mode_catalog
        from .graph_drawing import check_graphviz
        from .models import AgentMode, DeclaredTool
        from .revisions import record_model_change, record_revision_after_migrate
        from .services import refuse_deleting_a_mode_that_must_stay
        from .triggers import reinstall_after_migrate

        checks.register(check_mode_catalog, checks.Tags.database)
        checks.register(check_graphviz)
        post_migrate.connect(reinstall_after_migrate, sender=self)
        post_migrate.connect(record_revision_after_migrate, sender=self)
        pre_delete.connect(refuse_deleting_a_mode_that_must_stay, sender=AgentMode, dispatch_uid="modes.deletion_rules")
        for model in (AgentMode, DeclaredTool):
            for name, signal in (("save", post_save), ("delete", post_delete)):
                signal.connect(record_model_change, sender=model, dispatch_uid=f"modes.record_{name}_{model.__name__}")
