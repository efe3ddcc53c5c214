"""The cache behind the throttles when REDIS_URL is set: Redis, shared by every worker; while Redis cannot be reached
or refuses the commands, each process's own memory, so that throttled requests keep working with per-process counts
instead of failing. One warning is logged when an outage starts and one when it ends; Redis is tried again every few
seconds. Django builds one cache object per thread, so the fallback's counts and the outage are kept per Redis
location."""

import logging
import threading
import time
from functools import partialmethod

from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

logger = logging.getLogger("aptix_site.cache")

# Out of reach or too slow, and also a Redis that answers but refuses (full under maxmemory, a read-only replica,
# unable to save its snapshot): each fails every write as surely as an outage.
OUTAGE_ERRORS = (RedisError, OSError)

READINESS_KEY = "aptix:readyz"  # the readiness probe's write, one small key that expires

# By location, while Redis is taken to be down: the monotonic time before which it is not tried again.
_down_until: dict[str, float] = {}
_outage_lock = threading.Lock()


class FailoverRedisCache(RedisCache):
    retry_seconds = 5  # how long an outage is assumed to last before Redis is tried again

    def __init__(self, server, params):
        super().__init__(server, params)
        self._location = ",".join(self._servers)
        # LocMemCache keeps its entries per name, so one name per location is one count per process.
        self._fallback = LocMemCache(f"redis-failover-{self._location}", {"TIMEOUT": params.get("TIMEOUT", 300)})

    def reachable(self) -> bool:
        """
        Whether Redis takes a write now, as the throttles' counts need (for the readiness check; it does not change
        where counts go): a full Redis or a read-only replica answers a ping, and refuses the counts.
        """
        try:
            return bool(self._cache.get_client(write=True).set(READINESS_KEY, 1, ex=60))
        except OUTAGE_ERRORS:
            return False

    def _failover(self, method, *args, **kwargs):
        down_until = _down_until.get(self._location)
        if down_until is not None and time.monotonic() < down_until:
            return getattr(self._fallback, method)(*args, **kwargs)
        try:
            result = getattr(super(), method)(*args, **kwargs)
        except OUTAGE_ERRORS as error:
            with _outage_lock:
                if self._location not in _down_until:
                    logger.warning(
                        "Redis cannot be reached (%s); throttles count per process until it answers again.", error
                    )
                _down_until[self._location] = time.monotonic() + self.retry_seconds
            return getattr(self._fallback, method)(*args, **kwargs)
        if down_until is not None:
            with _outage_lock:
                if _down_until.pop(self._location, None) is not None:
                    logger.warning("Redis answers again; throttles count in Redis, shared by every worker.")
        return result


# Every read and write of the cache goes through _failover.
for _method in "add get set touch delete clear get_many set_many delete_many has_key incr".split():
    setattr(FailoverRedisCache, _method, partialmethod(FailoverRedisCache._failover, _method))
