"""Refuses to serve on a broken mode catalog (AGN-014 §7.6); called by wsgi.py, asgi.py and runserver."""

from django.core.exceptions import ImproperlyConfigured
from django.db import DEFAULT_DB_ALIAS, connections

from .checks import catalog_errors, catalog_is_migrated
from .models import AgentMode


def ensure_catalog_is_valid():
    try:
        if not catalog_is_migrated(DEFAULT_DB_ALIAS):
            raise ImproperlyConfigured(
                "Refusing to serve: the mode catalog's migrations are not applied. "
                "Run 'python manage.py migrate' first."
            )
        errors = catalog_errors(list(AgentMode.objects.using(DEFAULT_DB_ALIAS)))
    finally:
        # A server may fork workers after this; they must not share this connection.
        connections.close_all()
    if errors:
        raise ImproperlyConfigured(
            "Refusing to serve: the mode catalog is broken.\n" + "\n".join(str(error) for error in errors)
        )
