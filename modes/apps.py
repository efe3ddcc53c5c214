from django.apps import AppConfig
from django.core import checks
from django.db.models.signals import post_migrate


class ModesConfig(AppConfig):
    name = "modes"
    verbose_name = "Agent modes"

    def ready(self):
        from .checks import check_mode_catalog
        from .revisions import record_revision_after_migrate
        from .triggers import reinstall_after_migrate

        checks.register(check_mode_catalog, checks.Tags.database)
        post_migrate.connect(reinstall_after_migrate, sender=self)
        post_migrate.connect(record_revision_after_migrate, sender=self)
