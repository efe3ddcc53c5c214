"""The API's rate limits: DRF's scoped throttle, counting each client's requests per window of the rate's period with
the cache's atomic increment. DRF's own reads, changes and writes back one list of request times, so two workers that
read it at once both take the last request left; a counter never lets more than the limit through in a window (though
a client may spend its limit at the end of one window and again at the start of the next)."""

from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle


class WindowRateThrottle(ScopedRateThrottle):
    """ScopedRateThrottle counting per window (a clock minute for "N/min"), reading the rates from the settings."""

    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def allow_request(self, request, view):
        self.scope = getattr(view, self.scope_attr, None)
        return self._allow(lambda: self.get_cache_key(request, view))

    def allow_user(self, *, scope: str, user) -> bool:
        """allow_request for what a user does outside a view of this scope, counted on the same counter."""
        self.scope = scope
        return self._allow(lambda: self.cache_format % {"scope": scope, "ident": user.pk})

    def would_allow_user(self, *, scope: str, user) -> bool:
        """Whether allow_user would allow one more now, counting nothing: for a check before the act that counts."""
        self.scope = scope
        return self._allow(lambda: self.cache_format % {"scope": scope, "ident": user.pk}, count=False)

    def _allow(self, cache_key, *, count: bool = True) -> bool:
        self.rate = self.get_rate() if self.scope else None
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        self.now = self.timer()
        window = int(self.now // self.duration)
        self.window_ends = (window + 1) * self.duration
        key = f"{cache_key()}_{window}"
        if not count:
            return self.cache.get(key, 0) < self.num_requests
        # Started by the window's first request (add is atomic), and outliving the window, so that no increment during
        # the window finds it expired.
        self.cache.add(key, 0, 2 * self.duration)
        try:
            count = self.cache.incr(key)
        except ValueError:  # gone since the add: Redis restarted, or counting moved between Redis and this process
            self.cache.add(key, 0, 2 * self.duration)
            count = self.cache.incr(key)
        return count <= self.num_requests

    def wait(self):
        return self.window_ends - self.now
