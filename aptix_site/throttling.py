"""The API's rate limits: DRF's scoped throttle, counting each client's requests per window of the rate's period with
the cache's atomic increment. DRF's own reads, changes and writes back one list of request times, so two workers that
read it at once both take the last request left; a counter never lets more than the limit through in a window (though
a client may spend its limit at the end of one window and again at the start of the next).

A client is its user when signed in, else its address (client_address), which the login lockout counts by too."""

import ipaddress
import re

from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle, ScopedRateThrottle


# Where the address is none: never a client's own, and an address, as axes' column needs.
UNKNOWN_ADDRESS = "0.0.0.0"


# An address and the port a proxy added to it: 203.0.113.7:51234, or IPv6 in brackets, [2001:db8::1]:51234.
WITH_PORT = re.compile(r"\[(?P<ipv6>[^\]]*)\]:[0-9]{1,5}|(?P<ipv4>[^:]*):[0-9]{1,5}")


def client_address(request) -> str:
    """
    The client's address, for the throttles and the login lockout (AXES_CLIENT_IP_CALLABLE): DRF's reading, where
    X-Forwarded-For is trusted only from API_NUM_PROXIES. A port a proxy added is left out (WITH_PORT): kept, it
    gave each connection a throttle of its own, and made every such client the one unknown address below, so that
    LOGIN_FAILURES_PER_ADDRESS failures by anyone locked everyone out. UNKNOWN_ADDRESS when the entry is no address
    even so (a client's own text where API_NUM_PROXIES counts a proxy too many): axes stores addresses (inet on
    PostgreSQL, where such text made every login a 500), so all such clients count as one address. Not None: axes'
    row of a failure is unique by user name, address and user agent, which a NULL escapes, so two first failures at
    once would make two rows, and axes' next lookup of the one a 500.
    """
    # None for a request without REMOTE_ADDR (one made in-process): no address either.
    ident = BaseThrottle().get_ident(getattr(request, "_request", request)) or ""
    try:
        # Whole first: an IPv6 address without brackets (2001:db8::1) is not to be cut at its last colon.
        address = ipaddress.ip_address(ident)
    except ValueError:
        if (with_port := WITH_PORT.fullmatch(ident)) is None:
            return UNKNOWN_ADDRESS
        text = with_port["ipv4"] if with_port["ipv6"] is None else with_port["ipv6"]
        try:
            address = (ipaddress.IPv4Address if with_port["ipv6"] is None else ipaddress.IPv6Address)(text)
        except ValueError:
            return UNKNOWN_ADDRESS
    # Written one way (2001:db8::9, however a proxy spelled it; an IPv4 client as IPv4, as a dual-stack proxy may map
    # it to ::ffff:203.0.113.9), so that one client is one counter.
    address = getattr(address, "ipv4_mapped", None) or address
    return UNKNOWN_ADDRESS if getattr(address, "scope_id", None) else str(address)  # fe80::1%eth0: no inet either


class WindowRateThrottle(ScopedRateThrottle):
    """ScopedRateThrottle counting per window (a clock minute for "N/min"), reading the rates from the settings."""

    def get_ident(self, request):
        return client_address(request)

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
