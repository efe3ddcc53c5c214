"""runserver that refuses to start on a broken mode catalog, before the autoreloader hides the failure."""

from django.contrib.staticfiles.management.commands.runserver import Command as StaticfilesRunserver
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError

from modes.startup import ensure_catalog_is_valid


class Command(StaticfilesRunserver):
    def handle(self, *args, **options):
        try:
            ensure_catalog_is_valid()
        except ImproperlyConfigured as error:
            raise CommandError(str(error)) from error
        super().handle(*args, **options)
