"""
gunicorn's settings for serving the app: `gunicorn aptix_site.wsgi`, run from this directory, reads this
file. Options on the command line or in GUNICORN_CMD_ARGS override it, e.g. `--workers 4`.
"""

import os

# One sync worker per core; gunicorn's own default is a single worker, which leaves the other cores idle.
# On the 2-core benchmark machine, with PostgreSQL on the same host, 3 or 5 workers made reads up to a third
# slower and mode changes no faster (benchmarks/RESULTS.md). Where the database is on another host, more may
# pay. Each worker keeps one database connection open.
workers = os.cpu_count() or 1
