"""
The API's rate limits: DRF's scoped throttle, counting each client's requests per fixed window of the rate's
period with the cache's atomic increment.

DRF's own keeps every request's time in one cache entry that each request reads, changes and writes back. Its
cost grows with the rate (at 6000/min, a list of 6000 times is unpickled and pickled per request), and two
workers that read the entry at once both take the last request left. A counter costs the same at any rate and
never lets more than the limit through in one window. What it gives up: a client that spends its whole limit
at the end of one window and again at the start of the next makes up to twice the limit in one period.
"""

from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle


class WindowRateThrottle(ScopedRateThrottle):
    """
    ScopedRateThrottle ("120/min" under the view's throttle_scope) counting per window: each clock minute for a
    rate per minute. Rates are read from the settings when asked, so changed settings take effect.
    """

    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def allow_request(self, request, view):
        self.scope = getattr(view, self.scope_attr, None)
        return self._allow(lambda: self.get_cache_key(request, view))

    def allow_user(self, *, scope: str, user) -> bool:
        """allow_request for what a user does outside a view of this scope, counted on the same counter."""
        self.scope = scope
        return self._allow(lambda: self.cache_format % {"scope": scope, "ident": user.pk})

    def _allow(self, cache_key) -> bool:
        self.rate = self.get_rate() if self.scope else None
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        self.now = self.timer()
        window = int(self.now // self.duration)
        self.window_ends = (window + 1) * self.duration
        return self._count(f"{cache_key()}_{window}") <= self.num_requests

    def _count(self, key) -> int:
        """Adds this request to the window's counter, atomically; the count with it."""
        try:
            return self.cache.incr(key)
        except ValueError:  # the window's first request
            pass
        # The counter outlives its window, so that no increment during the window finds it expired.
        if self.cache.add(key, 1, 2 * self.duration):
            return 1
        return self.cache.incr(key)  # another worker's request came first

    def wait(self):
        return self.window_ends - self.now
