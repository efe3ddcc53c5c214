"""
Refuses to serve on a broken mode catalog (AGN-014 §7.6); called by wsgi.py, asgi.py and runserver.

What must be sound is the published revision, the catalog agents are served; the working copy's problems
(a pending revision, a change no revision records yet) are logged as warnings, since agents do not see them.
"""

import logging

from django.core.exceptions import ImproperlyConfigured
from django.db import DEFAULT_DB_ALIAS, connections

from .checks import catalog_is_migrated, published_catalog_errors, working_copy_warnings
from .models import AgentMode

logger = logging.getLogger(__name__)


def ensure_catalog_is_valid():
    try:
        if not catalog_is_migrated(DEFAULT_DB_ALIAS):
            raise ImproperlyConfigured(
                "Refusing to serve: the mode catalog's migrations are not applied. "
                "Run 'python manage.py migrate' first."
            )
        errors = published_catalog_errors()
        warnings = working_copy_warnings(list(AgentMode.objects.using(DEFAULT_DB_ALIAS)), errors)
    finally:
        # A server may fork workers after this; they must not share this connection.
        connections.close_all()
    if errors:
        raise ImproperlyConfigured("Refusing to serve: the mode catalog is broken.\n" + "\n".join(map(str, errors)))
    for warning in warnings:
        logger.warning("%s", warning)
