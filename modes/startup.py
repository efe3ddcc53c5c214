"""
Refuses to serve on a broken mode catalog (AGN-014 §7.6); called by wsgi.py, asgi.py and runserver. Only the published
revision must be sound: rows no revision holds (changed past the services) are not served, so only logged as warnings.
"""

import logging

from django.core.exceptions import ImproperlyConfigured
from django.db import DEFAULT_DB_ALIAS, connections

from .catalog import published_catalog
from .checks import catalog_is_migrated, unrecorded_change_warnings
from .rules import catalog_errors

logger = logging.getLogger(__name__)


def ensure_catalog_is_valid():
    try:
        if not catalog_is_migrated(DEFAULT_DB_ALIAS):
            raise ImproperlyConfigured(
                "Refusing to serve: the mode catalog's migrations are not applied. "
                "Run 'python manage.py migrate' first."
            )
        errors = catalog_errors(list(published_catalog().modes))
        warnings = unrecorded_change_warnings()
    finally:
        # A server may fork workers after this; they must not share this connection.
        connections.close_all()
    if errors:
        raise ImproperlyConfigured("Refusing to serve: the mode catalog is broken.\n" + "\n".join(map(str, errors)))
    for warning in warnings:
        logger.warning("%s", warning)
