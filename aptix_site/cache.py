"""
The cache behind the throttles when REDIS_URL is set: Redis, shared by every worker; and while Redis cannot
be reached, each process's own memory, so that throttled requests (logins, tool calls, new sessions) keep
working with per-process counts instead of failing. One warning is logged when an outage starts and one
when it ends; Redis is tried again every few seconds, so shared counting resumes with no restart.

Django builds one cache object per thread, so everything that must be per process (the fallback's counts and
the outage's state) is kept per Redis location, shared by the threads of a worker.
"""

import logging
import threading
import time
from functools import partialmethod

from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger("aptix_site.cache")

OUTAGE_ERRORS = (RedisConnectionError, RedisTimeoutError, OSError)


class _Outage:
    """Whether Redis is taken to be down, for every thread of the process that talks to one location."""

    def __init__(self):
        self.lock = threading.Lock()
        self.down_until = None  # while set: the monotonic time before which Redis is not tried again


_outages: dict[str, _Outage] = {}


class FailoverRedisCache(RedisCache):
    retry_seconds = 5  # how long an outage is assumed to last before Redis is tried again

    def __init__(self, server, params):
        super().__init__(server, params)
        location = ",".join(self._servers)
        # LocMemCache keeps its entries per name, so one name per location is one count per process.
        self._fallback = LocMemCache(f"redis-failover-{location}", {"TIMEOUT": params.get("TIMEOUT", 300)})
        self._outage = _outages.setdefault(location, _Outage())  # atomic: every thread gets the first one stored

    def reachable(self) -> bool:
        """Whether Redis answers now (for the readiness check; it does not change where counts go)."""
        try:
            return bool(self._cache.get_client().ping())
        except OUTAGE_ERRORS:
            return False

    def _failover(self, method, *args, **kwargs):
        outage = self._outage
        down_until = outage.down_until
        if down_until is not None and time.monotonic() < down_until:
            return getattr(self._fallback, method)(*args, **kwargs)
        try:
            result = getattr(super(), method)(*args, **kwargs)
        except OUTAGE_ERRORS as error:
            with outage.lock:
                if outage.down_until is None:
                    logger.warning(
                        "Redis cannot be reached (%s); throttles count per process until it answers again.", error
                    )
                outage.down_until = time.monotonic() + self.retry_seconds
            return getattr(self._fallback, method)(*args, **kwargs)
        if down_until is not None:
            with outage.lock:
                if outage.down_until is not None:
                    logger.warning("Redis answers again; throttles count in Redis, shared by every worker.")
                    outage.down_until = None
        return result


# Every read and write of the cache goes through _failover.
FAILOVER_METHODS = (
    "add", "get", "set", "touch", "delete", "clear", "get_many", "set_many", "delete_many", "has_key", "incr"
)
for _method in FAILOVER_METHODS:
    setattr(FailoverRedisCache, _method, partialmethod(FailoverRedisCache._failover, _method))
