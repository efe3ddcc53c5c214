"""Production settings plus the two baseline endpoints the benchmark compares against."""

from aptix_site.settings import *  # noqa: F403

ROOT_URLCONF = "benchmarks.urls"
