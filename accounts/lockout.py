"""
Password guessing, as django-axes sees it: which address a login comes from, the three lockout rules, the log
line each lockout writes, and what a locked-out client is told (here for the admin login; POST /api/token/
says it in JSON: accounts.views.TokenView).

The rules, each counted over the cool-off (LOGIN_LOCKOUT_MINUTES) from axes' own AccessAttempt rows:
- one user name from one address: AXES_FAILURE_LIMIT (LOGIN_FAILURE_LIMIT) failures, axes' own rule;
- one address, whatever the user names: LOGIN_FAILURES_PER_ADDRESS (many names guessed from one place);
- one user name, whatever the addresses: LOGIN_FAILURES_PER_USERNAME (one name sprayed from many places).

Why a handler of our own (AXES_HANDLER): axes 8.3.1 sums AccessAttempt.failures_since_start over the rows
matching each set of AXES_LOCKOUT_PARAMETERS within the cool-off, takes the largest of those sums
(AxesDatabaseHandler.get_failures) and compares it with ONE limit, get_failure_limit(request, credentials), both
before a login (is_locked) and after a failure (user_login_failed). A callable AXES_FAILURE_LIMIT or
AXES_LOCKOUT_PARAMETERS is given the request and the credentials, never the set being counted, so
[["username", "ip_address"], "ip_address", "username"] would hold all three rules to one number. It would also
change what a success lifts: on a login axes deletes the rows matching every set, so one user's good login
would wipe the failures of every other name tried from that address, and of that name from every address.
LockoutRulesHandler therefore overrides get_failures alone: one aggregate query counts the three rules, and
the number axes compares with AXES_FAILURE_LIMIT reaches it exactly when one of the rules is broken. The rest
(recording failures, refusing a locked login, the reset on success, axes_reset_ip, axes_reset_username,
deleting Access attempts in the admin) is axes' own, working on the same rows.
"""

import enum
import logging
from datetime import datetime

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Q, Sum
from django.shortcuts import render
from rest_framework.throttling import BaseThrottle

log = logging.getLogger(__name__)


class LockoutRule(enum.Enum):
    """What a lockout holds, broadest first: when several rules are broken, the client is told the first."""

    ADDRESS = "address"
    USERNAME = "username"
    PAIR = "username and address"

    @property
    def limit(self) -> int:
        return {
            LockoutRule.ADDRESS: settings.LOGIN_FAILURES_PER_ADDRESS,
            LockoutRule.USERNAME: settings.LOGIN_FAILURES_PER_USERNAME,
            LockoutRule.PAIR: settings.AXES_FAILURE_LIMIT,
        }[self]

    @property
    def refused(self) -> str:
        """What a client that is locked out by this rule reads first."""
        return {
            LockoutRule.ADDRESS: "Too many failed logins from your address.",
            LockoutRule.USERNAME: "Too many failed logins for this user name.",
            LockoutRule.PAIR: "Too many failed logins for this user name from your address.",
        }[self]

    def matching(self, *, username: str | None, address: str | None) -> Q:
        """The AccessAttempt rows this rule counts for a login by `username` from `address`."""
        return {
            LockoutRule.ADDRESS: Q(ip_address=address),
            LockoutRule.USERNAME: Q(username=username),
            LockoutRule.PAIR: Q(ip_address=address, username=username),
        }[self]


def client_address(request) -> str:
    """The address DRF's throttles identify a client by: X-Forwarded-For is trusted only from API_NUM_PROXIES."""
    return BaseThrottle().get_ident(getattr(request, "_request", request))


def count_recent_failures(*, username: str | None, address: str | None, since: datetime) -> dict[LockoutRule, int]:
    """Failed logins since `since` that each rule counts for a login by `username` from `address`: one query."""
    conditions = {rule: rule.matching(username=username, address=address) for rule in LockoutRule}
    totals = (
        AccessAttempt.objects.filter(conditions[LockoutRule.ADDRESS] | conditions[LockoutRule.USERNAME])
        .filter(attempt_time__gte=since)
        .aggregate(
            **{rule.name: Sum("failures_since_start", filter=conditions[rule], default=0) for rule in LockoutRule}
        )
    )
    return {rule: totals[rule.name] for rule in LockoutRule}


def broken_rule(*, failures: dict[LockoutRule, int]) -> LockoutRule | None:
    """The broadest rule whose count reached its limit, if any. A limit of 0 turns the address and user name
    rules off (the pair's is axes' own setting, where 0 would refuse every login)."""
    for rule in LockoutRule:
        switched_off = rule.limit == 0 and rule is not LockoutRule.PAIR
        if not switched_off and failures[rule] >= rule.limit:
            return rule
    return None


class LockoutRulesHandler(AxesDatabaseHandler):
    """axes' database handler, locking out an address and a user name too (why a subclass: the module's text)."""

    def get_failures(self, request, credentials: dict | None = None) -> int:
        failures = count_recent_failures(
            username=get_client_username(request, credentials),
            address=request.axes_ip_address,
            since=get_cool_off_threshold(request),
        )
        # Kept on the request (axes' own or DRF's, whichever axes was given) for the message and the log line;
        # axes calls this before the login and again after a failure, so the last answer is the one that counts.
        request.axes_lockout_rule = broken_rule(failures=failures)
        if request.axes_lockout_rule is None:
            return failures[LockoutRule.PAIR]  # below the pair's limit, as axes itself would count
        return max(failures[LockoutRule.PAIR], get_failure_limit(request, credentials))


def log_lockout(sender, request, username, ip_address, **kwargs) -> None:
    """Receives axes' user_locked_out (sent for each refused login): one line naming the rule and what it holds,
    where axes' own line names the user name and address whichever rule it is."""
    rule = request.axes_lockout_rule
    within = f"within {lockout_minutes()} minutes"
    held = {
        LockoutRule.ADDRESS: f"address {ip_address} ({rule.limit} failed logins across user names {within}; "
        f"this one for user name {username!r})",
        LockoutRule.USERNAME: f"user name {username!r} ({rule.limit} failed logins across addresses {within}; "
        f"this one from {ip_address})",
        LockoutRule.PAIR: f"user name {username!r} from address {ip_address} ({rule.limit} failed logins {within})",
    }[rule]
    log.warning("Login lockout by the %s rule: %s", rule.value, held)


def lockout_minutes() -> int:
    return int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)


def lockout_seconds() -> int:
    return int(settings.AXES_COOLOFF_TIME.total_seconds())


def lockout_message(*, request) -> str:
    """What a client refused by the lockout reads: which rule holds it, for how long, and who can lift it."""
    return (
        f"{request.axes_lockout_rule.refused} Try again in {lockout_minutes()} minutes, "
        "or ask an administrator to unlock it."
    )


def admin_lockout_response(request, original_response=None, credentials=None):
    response = render(request, "accounts/lockout.html", {"message": lockout_message(request=request)}, status=429)
    response["Retry-After"] = str(lockout_seconds())
    return response
