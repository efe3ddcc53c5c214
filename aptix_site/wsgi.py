"""WSGI entry point (`make serve` runs it under Granian): it refuses to load on a broken mode catalog, bounds its
requests' waits on PostgreSQL, and keeps the process's environment (SECRET_KEY, ...) out of each request's META."""

import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

from aptix_site.database import bound_waits_in_requests
from aptix_site.process_environment import WithoutProcessEnvironment

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aptix_site.settings")
application = WithoutProcessEnvironment(get_wsgi_application())

from modes.startup import ensure_catalog_is_valid  # noqa: E402  (needs the app registry)

bound_waits_in_requests()
ensure_catalog_is_valid()
# Every view module now, not at the first request: code that cannot load fails the worker's start, where a reload of
# `make serve` sees it and keeps the old workers (deploy/serve).
get_resolver().url_patterns

# What is loaded by now lives as long as the process: frozen, the garbage collector no longer walks it per request.
gc.collect()
gc.freeze()
