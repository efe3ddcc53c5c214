"""
gunicorn's settings for serving the app: `gunicorn aptix_site.wsgi`, run from this directory, reads this
file. Options on the command line or in GUNICORN_CMD_ARGS override it, e.g. `--workers 4`.
"""

import os

# One sync worker per core. gunicorn's own default is a single worker, which leaves all but one core idle.
# On a 2-core machine with PostgreSQL on the same host, 3 or 5 workers served fewer requests than 2, reads
# up to a third fewer (benchmarks/RESULTS.md); where the database is on another host, more may pay.
workers = len(os.sched_getaffinity(0))
