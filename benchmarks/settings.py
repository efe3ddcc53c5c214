"""Production settings plus the in-stack diagnostic view (benchmarks/urls.py) that the harness also measures."""

from aptix_site.settings import *  # noqa: F403

ROOT_URLCONF = "benchmarks.urls"
