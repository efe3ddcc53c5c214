"""
Password guessing, as django-axes sees it: the three lockout rules, the log line each lockout writes, and what a
locked-out client is told (here for the admin login; POST /api/token/ says it in JSON: accounts.views.TokenView).
A login's address is the one the throttles count by (aptix_site.throttling.client_address).

The rules, each counted over the cool-off (LOGIN_LOCKOUT_MINUTES) from axes' own AccessAttempt rows:
- one user name from one address: AXES_FAILURE_LIMIT (LOGIN_FAILURE_LIMIT) failures, axes' own rule;
- one address, whatever the user names: LOGIN_FAILURES_PER_ADDRESS (many names guessed from one place);
- one user name, whatever the addresses: LOGIN_FAILURES_PER_USERNAME (one name sprayed from many places).

Why a handler of our own (AXES_HANDLER): axes 8.3.1 compares the largest failure count over the sets of
AXES_LOCKOUT_PARAMETERS with ONE limit (AxesDatabaseHandler.get_failures, get_failure_limit), and a callable
limit is never told which set it is counting, so [["username", "ip_address"], "ip_address", "username"] would
hold all three rules to one number. On a success axes would also delete the rows of every set: one user's good
login would wipe the failures of every other name tried from that address. LockoutRulesHandler overrides
get_failures alone: one query counts the three rules, and the number axes compares with AXES_FAILURE_LIMIT
reaches it exactly when one of them is broken. Everything else (recording failures, refusing a locked login,
the reset on success, axes_reset_ip, axes_reset_username, the admin's Access attempts) is axes' own.
"""

import enum
import logging

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Q, Sum
from django.shortcuts import render

log = logging.getLogger(__name__)


class LockoutRule(enum.Enum):
    """What a lockout holds, broadest first: when several rules are broken, the client is told the first."""

    # The name the log gives it, the setting of its limit, the AccessAttempt fields it counts by, what a client
    # locked out by it reads first.
    ADDRESS = ("address", "LOGIN_FAILURES_PER_ADDRESS", ("ip_address",), "Too many failed logins from your address.")
    USERNAME = ("username", "LOGIN_FAILURES_PER_USERNAME", ("username",), "Too many failed logins for this user name.")
    PAIR = (
        "username and address", "AXES_FAILURE_LIMIT", ("username", "ip_address"),
        "Too many failed logins for this user name from your address.",
    )

    def __init__(self, label: str, limit_setting: str, fields: tuple[str, ...], refused: str):
        self.label, self.limit_setting, self.fields, self.refused = label, limit_setting, fields, refused

    @property
    def limit(self) -> int:
        return getattr(settings, self.limit_setting)


class LockoutRulesHandler(AxesDatabaseHandler):
    """axes' database handler, locking out an address and a user name too (why a subclass: the module's text)."""

    def get_failures(self, request, credentials: dict | None = None) -> int:
        login = {"username": get_client_username(request, credentials), "ip_address": request.axes_ip_address}
        conditions = {rule: Q(**{field: login[field] for field in rule.fields}) for rule in LockoutRule}
        # One query. The rows of the address rule and of the user name rule: the pair's rows are among both.
        attempts = AccessAttempt.objects.filter(
            conditions[LockoutRule.ADDRESS] | conditions[LockoutRule.USERNAME],
            attempt_time__gte=get_cool_off_threshold(request),
        )
        sums = {rule.name: Sum("failures_since_start", filter=conditions[rule], default=0) for rule in LockoutRule}
        totals = attempts.aggregate(**sums)
        failures = {rule: totals[rule.name] for rule in LockoutRule}
        # The broadest rule whose count reached its limit. A limit of 0 turns the address and user name rules off
        # (the pair's is axes' own setting, where 0 would refuse every login). Kept on the request (axes' own or
        # DRF's, whichever axes was given) for the message and the log line; axes calls this before the login and
        # again after a failure, so the last answer is the one that counts.
        request.axes_lockout_rule = next(
            (rule for rule in LockoutRule if (rule.limit or rule is LockoutRule.PAIR) and failures[rule] >= rule.limit),
            None,
        )
        if request.axes_lockout_rule is None:
            return failures[LockoutRule.PAIR]  # below the pair's limit, as axes itself would count
        return max(failures[LockoutRule.PAIR], get_failure_limit(request, credentials))


def log_lockout(sender, request, username, ip_address, **kwargs) -> None:
    """Receives axes' user_locked_out (sent for each refused login): one line naming the rule and what it holds,
    where axes' own line names the user name and address whichever rule it is."""
    rule = request.axes_lockout_rule
    within = f"within {lockout_seconds() // 60} minutes"
    held = {
        LockoutRule.ADDRESS: f"address {ip_address} ({rule.limit} failed logins across user names {within}; "
        f"this one for user name {username!r})",
        LockoutRule.USERNAME: f"user name {username!r} ({rule.limit} failed logins across addresses {within}; "
        f"this one from {ip_address})",
        LockoutRule.PAIR: f"user name {username!r} from address {ip_address} ({rule.limit} failed logins {within})",
    }[rule]
    log.warning("Login lockout by the %s rule: %s", rule.label, held)


def lockout_seconds() -> int:
    return int(settings.AXES_COOLOFF_TIME.total_seconds())


def lockout_message(*, request) -> str:
    """What a client refused by the lockout reads: which rule holds it, for how long, and who can lift it."""
    refused = request.axes_lockout_rule.refused
    return f"{refused} Try again in {lockout_seconds() // 60} minutes, or ask an administrator to unlock it."


def admin_lockout_response(request, original_response=None, credentials=None):
    response = render(request, "accounts/lockout.html", {"message": lockout_message(request=request)}, status=429)
    response["Retry-After"] = str(lockout_seconds())
    return response
