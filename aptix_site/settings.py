"""Settings for the Aptix Modes service. Everything that differs between machines comes from the environment; the
Configuration table of docs/operations.md lists each variable, its default and its meaning."""

import os
import tempfile
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from django.core.management.utils import get_random_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent


def env(name) -> str | None:
    """The variable's value, None when it is unset or blank (a blank one means its default)."""
    return os.environ.get(name, "").strip() or None


def env_flag(name, default=False) -> bool:
    value = env(name)
    return default if value is None else value.lower() in {"1", "true", "yes", "on"}


def env_int(name, default: int, *, most: int | None = None) -> int:
    value = env(name)
    if value is None:
        return default
    # ASCII digits, and their length checked first: int() refuses strings of thousands of digits with a ValueError.
    digits = value.lstrip("0") or "0"
    number = int(digits) if value.isascii() and value.isdigit() and len(digits) <= 18 else -1
    if not 0 <= number <= (most if most is not None else 10**18):
        bound = f"from 0 to {most}" if most is not None else "0 or more"
        raise ImproperlyConfigured(f"{name} must be a whole number, {bound}; it is {value!r}.")
    return number


def env_number(name, default: float | None, *, most: float | None = None) -> float | None:
    """A decimal number from 0 (to most, if given); default when unset."""
    value = env(name)
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not 0 <= number <= (most if most is not None else float("inf")):
        bound = f"from 0 to {most:g}" if most is not None else "0 or more"
        raise ImproperlyConfigured(f"{name} must be a number {bound}; it is {value!r}.")
    return number


def env_rate(name, default: str) -> str:
    """
    A throttle rate in DRF's notation: a whole number of requests per second, minute, hour or day (120/min). DRF reads
    only the period's first letter, so 1000/hours is taken as it would be.
    """
    value = env(name)
    if value is None:
        return default
    count, _, period = value.partition("/")
    digits = count.isascii() and count.isdigit() and len(count) <= 18
    if not (digits and period.isascii() and period.isalpha() and period[0] in "smhd"):  # one '/', as DRF splits it
        raise ImproperlyConfigured(f"{name} must be requests per sec, min, hour or day, as 120/min; it is {value!r}.")
    return value


def env_list(name, default) -> list[str]:
    value = env(name)
    return default if value is None else [item.strip() for item in value.split(",") if item.strip()]


def development_secret_key(path: Path) -> str:
    """DEBUG's key without SECRET_KEY: random, made once per checkout (so nobody can forge cookies with a published
    one) and kept in path. Written aside, then linked into place: processes starting at once all read the winner."""
    if not path.exists():
        descriptor, draft = tempfile.mkstemp(dir=path.parent, prefix=f"{path.name}.")  # mode 0600
        try:
            with os.fdopen(descriptor, "w") as file:
                file.write(get_random_secret_key())
            os.link(draft, path)
        except FileExistsError:
            pass  # another process made it first
        finally:
            os.unlink(draft)
    try:  # not through a link: a key file planted as a link to a published key would be followed
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW)) as file:
            return file.read().strip()
    except OSError as error:
        raise ImproperlyConfigured(
            f"The development key {path} cannot be read ({error.strerror}); it must be a file of this checkout's "
            "own, not a link: remove it, and the next start makes a new one."
        ) from None


DEBUG = env_flag("DEBUG")

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off. For a local run, set DEBUG=1.")
    SECRET_KEY = development_secret_key(BASE_DIR / ".dev-secret-key")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
CSRF_FAILURE_VIEW = "front_door.views.csrf_failure"  # its page renders under the Content-Security-Policy
MCP_ALLOWED_ORIGINS = env_list("MCP_ALLOWED_ORIGINS", [])

SECURE_SSL_REDIRECT = env_flag("SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = not DEBUG
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_flag("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_flag("SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env_flag("SECURE_PROXY_SSL_HEADER") else None

INSTALLED_APPS = [
    # Before staticfiles, so that modes' runserver (which refuses to start on a broken catalog) is the one run.
    "modes",
    "sessions_app",
    "accounts",
    "agent_tools",
    "agent_api",
    "mcp_server",
    "health",
    "front_door",
    "aptix_site.apps.AdminConfig",  # Django's admin, with our site (aptix_site.admin.AdminSite)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    # knox's token model (our accounts.ApiToken subclasses it) and its key generation and digest.
    "knox",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Before WhiteNoise and CsrfViewMiddleware: a method a page does not serve is a JSON 405, not WhiteNoise's
    # empty one or a CSRF failure.
    "aptix_site.middleware.ServedMethodsMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "aptix_site.middleware.RequestBodyLimitMiddleware",
    "aptix_site.middleware.RejectNulCharactersMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "modes.middleware.PublishedCatalogMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "aptix_site.middleware.HtmlContentSecurityPolicyMiddleware",
    # Last, as django-axes asks: it turns a lockout found during the login into its answer.
    "axes.middleware.AxesMiddleware",
]

CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [NONE],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    },
}

AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_HANDLER = "accounts.lockout.LockoutRulesHandler"
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
LOGIN_FAILURES_PER_ADDRESS = env_int("LOGIN_FAILURES_PER_ADDRESS", 30)
LOGIN_FAILURES_PER_USERNAME = env_int("LOGIN_FAILURES_PER_USERNAME", 100)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# A login refused while locked out is not counted again: else one address, refused after its pair's limit, could
# go on guessing until it reached a user name's limit and locked that name's owner out from every address.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_CLIENT_IP_CALLABLE = "aptix_site.throttling.client_address"
AXES_LOCKOUT_CALLABLE = "accounts.lockout.admin_lockout_response"
# The log names the user name and the address (axes never logs the password).
AXES_SENSITIVE_PARAMETERS = []

ROOT_URLCONF = "aptix_site.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "aptix_site.wsgi.application"

# Not health-checked (a round trip per request): a dropped connection fails the one request that meets it (503).
try:
    DATABASES = {"default": dj_database_url.config(default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}", conn_max_age=600)}
except ValueError as error:  # an unknown scheme, a port that is not a number: never echo the URL (a password)
    raise ImproperlyConfigured(
        f"DATABASE_URL is not a database URL this service can use ({type(error).__name__}); "
        "write it as postgres://user:password@host:5432/name, or leave it unset for SQLite."
    ) from None

DATABASE_POOLER = env("DATABASE_POOLER")
if DATABASE_POOLER not in {None, "session", "transaction"}:
    raise ImproperlyConfigured("DATABASE_POOLER must be 'transaction', 'session' or unset (no pooler).")

database_options = DATABASES["default"].setdefault("OPTIONS", {})
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Writers queue for the write lock instead of failing with "database is locked"; WAL lets reads go on meanwhile.
    database_options.update(
        transaction_mode="IMMEDIATE", timeout=20, init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
    )
# Off by default behind a transaction pooler: PgBouncer before 1.21 hands a connection's prepared statement to another
# client, which may then run it with its own values. PgBouncer 1.21+ with max_prepared_statements may turn them on.
elif env_flag("DATABASE_PREPARED_STATEMENTS", DATABASE_POOLER != "transaction"):
    database_options.update(server_side_binding=True, prepare_threshold=5)
# With a transaction pooler, a cursor held open across transactions would land on another client's server connection.
DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = DATABASE_POOLER == "transaction"

# The servers' requests only (aptix_site.database): commands and migrations wait as long as they need.
DATABASE_LOCK_TIMEOUT_MS = env_int("DATABASE_LOCK_TIMEOUT_MS", 3000)
DATABASE_STATEMENT_TIMEOUT_MS = env_int("DATABASE_STATEMENT_TIMEOUT_MS", 5000)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

TIME_ZONE = "UTC"

STATIC_URL = "static/"
# WhiteNoise serves the admin's and Swagger UI's assets straight from the installed packages: no collectstatic.
WHITENOISE_USE_FINDERS = True

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.StrictTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["aptix_site.content.StrictJSONParser"],
    "EXCEPTION_HANDLER": "aptix_site.api.api_exception_handler",
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "aptix_site.content.FallbackContentNegotiation",
    "NUM_PROXIES": env_int("API_NUM_PROXIES", 0),
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_THROTTLE_RATES": {
        "tool-invoke": env_rate("TOOL_INVOKE_RATE", "120/min"),
        "session-create": env_rate("SESSION_CREATE_RATE", "30/min"),
        "token": env_rate("TOKEN_RATE", "10/min"),
    },
}

KNOX_TOKEN_MODEL = "accounts.ApiToken"
# knox's migrations build only its token table, which ours replaces: unused, its key to the users would stop flush.
MIGRATION_MODULES = {"knox": None}
API_TOKEN_MAX_TTL_DAYS = 36_500  # a hundred years: a token's expiry stays far from the end of datetime's range
API_TOKEN_TTL_DAYS = env_int("API_TOKEN_TTL_DAYS", 0, most=API_TOKEN_MAX_TTL_DAYS) or None
API_MAX_TOKENS_PER_USER = env_int("API_MAX_TOKENS_PER_USER", 100)
# Expiry is ours (API_TOKEN_TTL_DAYS, given to each token as it is created), never knox's default of 10 hours.
REST_KNOX = {"TOKEN_TTL": None}

API_MAX_BODY_BYTES = env_int("API_MAX_BODY_BYTES", 64 * 1024)
# An import of coding agents' mode files (POST /api/catalog/import/, import_modes): the whole body, and each file.
API_MAX_IMPORT_BYTES = env_int("API_MAX_IMPORT_BYTES", 5 * 1024 * 1024)
API_BODY_LIMITS = {"/api/catalog/import/": API_MAX_IMPORT_BYTES}
# Django's own cap on a body it reads whole (2.5 MiB by default) must not undercut the import's.
DATA_UPLOAD_MAX_MEMORY_SIZE = API_MAX_IMPORT_BYTES
# What one MCP request may ask for: the messages of a 2025-03-26 batch, and the bytes of its answer.
MCP_MAX_BATCH = env_int("MCP_MAX_BATCH", 50)
MCP_MAX_RESPONSE_BYTES = env_int("MCP_MAX_RESPONSE_BYTES", 4 * 1024 * 1024)

SPECTACULAR_SETTINGS = {
    "TITLE": "Aptix Modes API",
    # Markdown, which Swagger UI renders as HTML: text in angle brackets goes in backticks, or it is taken for a tag.
    "DESCRIPTION": "The agent mode catalog, the agent tools and agent sessions. "
    "Every endpoint but the schema, its documentation and `POST /api/token/` needs a token "
    "(`Authorization: Token <key>`) or a logged-in session. A method an endpoint does not list is answered 405, "
    "and a POST body that reaches the app without a `Content-Length` (chunked, where no proxy read it whole "
    "first) 411.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_AUTHENTICATION": [],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Two fields named status (a mode's, a revision's release): each enum its own name.
    "ENUM_NAME_OVERRIDES": {
        "ReleaseStatusEnum": "modes.releases.ReleaseStatus.values",
        "StatusEnum": "modes.models.ModeStatus.values",
        "EntryConfirmationEnum": "modes.models.EntryConfirmation.values",
        "ConfirmationChoiceEnum": "sessions_app.confirmations.CHOICES",
        "ConfirmedByEnum": "sessions_app.models.ConfirmedBy.values",
        "ConfirmationChannelEnum": "sessions_app.models.ConfirmationChannel.values",
        "DiffWarningCodeEnum": "modes.releases.DIFF_WARNING_CODES",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "aptix_site.api.document_long_request_lines",
    ],
    # Swagger UI would otherwise fetch a validity badge from validator.swagger.io: no outside calls.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
}

CATALOG_APPROVALS = env_int("CATALOG_APPROVALS", 0)
# Who confirms a mode change (TUL-007 §4.3): "model", whose call counts as the user's yes, or "user", whom the server
# asks itself before anything changes. A mode's entry_confirmation may say otherwise for switches into it.
MODE_CHANGE_CONFIRMATION = env("MODE_CHANGE_CONFIRMATION") or "model"
if MODE_CHANGE_CONFIRMATION not in {"model", "user"}:
    raise ImproperlyConfigured(
        f"MODE_CHANGE_CONFIRMATION must be 'model' or 'user'; it is {MODE_CHANGE_CONFIRMATION!r}."
    )

# Routing evaluations and the release gate (docs/catalog.md, Routing evaluations). No gate is set by default: a
# revision whose latest evaluation by CATALOG_EVAL_SCORER routes fewer cases right than the minimum, or drops more
# than the most below the published revision's, is neither approved nor published.
CATALOG_EVAL_MIN_ACCURACY = env_number("CATALOG_EVAL_MIN_ACCURACY", None, most=1)
CATALOG_EVAL_MAX_DROP = env_number("CATALOG_EVAL_MAX_DROP", None, most=1)
CATALOG_EVAL_SCORER = env("CATALOG_EVAL_SCORER") or "offline"
if CATALOG_EVAL_SCORER not in {"offline", "llm"}:
    raise ImproperlyConfigured(f"CATALOG_EVAL_SCORER must be 'offline' or 'llm'; it is {CATALOG_EVAL_SCORER!r}.")
if CATALOG_EVAL_SCORER == "llm" and CATALOG_APPROVALS == 0:
    raise ImproperlyConfigured(
        "CATALOG_EVAL_SCORER=llm needs CATALOG_APPROVALS of 1 or more: with none, a change is published as it is "
        "saved, and only the offline scorer runs within a request."
    )
# The offline scorer predicts stay when no mode's routing text is this similar to the utterance.
ROUTING_EVAL_THRESHOLD = env_number("ROUTING_EVAL_THRESHOLD", 0.3, most=1)
# The llm scorer (manage.py eval_routing --scorer llm): any OpenAI-compatible Chat Completions endpoint.
ROUTING_EVAL_BASE_URL = env("ROUTING_EVAL_BASE_URL")
ROUTING_EVAL_MODEL = env("ROUTING_EVAL_MODEL")
ROUTING_EVAL_API_KEY = env("ROUTING_EVAL_API_KEY")
ROUTING_EVAL_TIMEOUT = env_number("ROUTING_EVAL_TIMEOUT", 30.0)

CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
if REDIS_URL := env("REDIS_URL"):
    # Short timeouts: a Redis that hangs must not hold requests (aptix_site.cache counts per process meanwhile).
    CACHES["default"] = {
        "BACKEND": "aptix_site.cache.FailoverRedisCache",
        "LOCATION": REDIS_URL,
        "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
    }

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {name: {"level": "INFO"} for name in ("modes", "sessions_app", "agent_tools", "aptix_site")},
}
