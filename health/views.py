"""GET /healthz: the process is up (it touches nothing else). GET /readyz: it can serve, which needs the database and
a sound published catalog revision; a Redis outage makes it "degraded" but still ready, since throttles then count
per process. Both are public JSON, 200 or 503, naming no host, error or internal detail."""

from django.core.cache import caches
from django.db import DatabaseError
from django.http import JsonResponse
from django.views.decorators.cache import never_cache

from aptix_site.middleware import serves_methods
from modes.catalog import published_catalog
from modes.rules import catalog_errors


@never_cache
@serves_methods("GET", "HEAD")
def healthz(request):
    return JsonResponse({"status": "ok"})


@never_cache
@serves_methods("GET", "HEAD")
def readyz(request):
    checks = {"database": "ok", "catalog": "ok", "cache": "per-process"}  # no REDIS_URL: per process by design
    if reachable := getattr(caches["default"], "reachable", None):
        checks["cache"] = "ok" if reachable() else "unavailable"
    try:
        if catalog_errors(list(published_catalog().modes)):
            checks["catalog"] = "broken"
    except DatabaseError:
        checks["database"] = checks["catalog"] = "unavailable"
    if checks["database"] != "ok" or checks["catalog"] != "ok":
        return JsonResponse({"status": "unavailable", "checks": checks}, status=503)
    return JsonResponse({"status": "degraded" if checks["cache"] == "unavailable" else "ok", "checks": checks})
