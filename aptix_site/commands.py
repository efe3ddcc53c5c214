"""The base of the management commands that call services: a service's refusal ends the command in one line."""

from django.core.management.base import BaseCommand, CommandError

from .service_errors import ServiceError, one_line


class ServiceCommand(BaseCommand):
    """A command whose services' refusals (aptix_site.service_errors) become CommandError: the one place they do."""

    def execute(self, *args, **options):
        try:
            return super().execute(*args, **options)
        except ServiceError as error:
            raise CommandError(one_line(error)) from None
