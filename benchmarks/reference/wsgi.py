"""WSGI entry point of the reference project (benchmarks/run.py serves it with deploy/serve, as the app)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.reference.settings")

application = get_wsgi_application()
