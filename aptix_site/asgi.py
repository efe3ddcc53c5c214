"""ASGI entry point (uvicorn aptix_site.asgi:application). It refuses to load on a broken mode catalog."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aptix_site.settings")

application = get_asgi_application()

from modes.startup import ensure_catalog_is_valid  # noqa: E402  (needs the app registry)

ensure_catalog_is_valid()
