"""ASGI entry point, for an ASGI server of the operator's choosing (the tests serve it with uvicorn). It refuses to
load on a broken mode catalog, and bounds the waits of its requests on PostgreSQL (aptix_site.database)."""

import os

from django.core.asgi import get_asgi_application

from aptix_site.database import bound_waits_in_requests

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aptix_site.settings")
application = get_asgi_application()

from modes.startup import ensure_catalog_is_valid  # noqa: E402  (needs the app registry)

bound_waits_in_requests()
ensure_catalog_is_valid()
