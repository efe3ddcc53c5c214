"""
GET /healthz: the process is up (it touches nothing else). GET /readyz: it can serve, which needs the database and a
sound published catalog revision; a Redis outage makes it "degraded" but still ready, since throttles then count per
process, and so does a catalog change made past the services that no revision records yet (catalog "unrecorded"): agents
are served the revision before it. Both are public JSON, 200 or 503, and name no host, error or internal detail.
"""

from django.core.cache import caches
from django.db import DatabaseError
from django.http import JsonResponse
from django.views.decorators.cache import never_cache

from aptix_site.middleware import serves_methods
from modes.catalog import read_state
from modes.checks import published_catalog_errors


@never_cache
@serves_methods("GET", "HEAD")
def healthz(request):
    return JsonResponse({"status": "ok"})


@never_cache
@serves_methods("GET", "HEAD")
def readyz(request):
    checks = {"database": "ok", "catalog": "ok", "cache": _cache_state()}
    try:
        state = read_state()
        if published_catalog_errors():
            checks["catalog"] = "broken"
        elif state is not None and state.unrecorded:
            checks["catalog"] = "unrecorded"
    except DatabaseError:
        checks["database"] = checks["catalog"] = "unavailable"
    if checks["database"] != "ok" or checks["catalog"] not in ("ok", "unrecorded"):
        status, code = "unavailable", 503
    elif checks["cache"] == "unavailable" or checks["catalog"] == "unrecorded":
        status, code = "degraded", 200
    else:
        status, code = "ok", 200
    return JsonResponse({"status": status, "checks": checks}, status=code)


def _cache_state() -> str:
    """The throttles' shared cache: "ok", "unavailable" (counting per process meanwhile), or "per-process"."""
    reachable = getattr(caches["default"], "reachable", None)
    if reachable is None:
        return "per-process"  # no REDIS_URL: each process counts on its own by design
    return "ok" if reachable() else "unavailable"
