"""aptix_site/settings.py reads the environment: SECRET_KEY, DEBUG, DATABASE_URL, DATABASE_PREPARED_STATEMENTS,
MODE_CHANGE_CONFIRMATION, the routing evaluations' settings and the throttle rates."""

import os
import runpy
import subprocess
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from ..servers import django_process

PROJECT_DIR = Path(__file__).resolve().parents[2]
SETTINGS_FILE = PROJECT_DIR / "aptix_site" / "settings.py"


@pytest.fixture
def load_settings(monkeypatch):
    """Runs the settings module afresh with the given environment; returns its names."""

    def load(**env):
        for name in ("SECRET_KEY", "DEBUG", "DATABASE_URL", "DATABASE_PREPARED_STATEMENTS", "DATABASE_POOLER"):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        return runpy.run_path(str(SETTINGS_FILE))

    return load


def test_settings_refuse_to_load_without_secret_key_when_debug_is_off():
    env = {name: value for name, value in os.environ.items() if name not in ("SECRET_KEY", "DEBUG", "DATABASE_URL")}
    result = django_process(env)
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_missing_secret_key_with_debug_off_raises_improperly_configured(load_settings):
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY must be set when DEBUG is off"):
        load_settings()
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY must be set when DEBUG is off"):
        load_settings(DEBUG="0", SECRET_KEY="")


def test_debug_on_without_secret_key_uses_this_checkouts_random_key(load_settings):
    names = load_settings(DEBUG="1")
    assert names["DEBUG"] is True
    kept = PROJECT_DIR / ".dev-secret-key"
    assert names["SECRET_KEY"] == kept.read_text().strip()
    assert len(names["SECRET_KEY"]) == 50
    assert kept.stat().st_mode & 0o777 == 0o600
    assert load_settings(DEBUG="1")["SECRET_KEY"] == names["SECRET_KEY"]  # the same key at every start
    ignored = subprocess.run(["git", "check-ignore", "-q", str(kept)], cwd=PROJECT_DIR, check=False)
    assert ignored.returncode == 0, "git would commit the development key"


def test_each_checkout_gets_a_development_key_of_its_own(load_settings, tmp_path):
    make_key = load_settings(DEBUG="1")["development_secret_key"]
    first, second = make_key(tmp_path / "one"), make_key(tmp_path / "two")
    assert first != second
    assert make_key(tmp_path / "one") == first
    assert sorted(path.name for path in tmp_path.iterdir()) == ["one", "two"]  # no drafts left behind


def test_secret_key_comes_from_the_environment(load_settings):
    names = load_settings(SECRET_KEY="from-the-environment")
    assert (names["SECRET_KEY"], names["DEBUG"]) == ("from-the-environment", False)


def test_without_database_url_the_database_is_sqlite_beside_manage_py(load_settings):
    database = load_settings(SECRET_KEY="x")["DATABASES"]["default"]
    assert database["ENGINE"] == "django.db.backends.sqlite3"
    assert Path(database["NAME"]) == PROJECT_DIR / "db.sqlite3"


def test_postgres_database_url_selects_postgresql(load_settings):
    database = load_settings(SECRET_KEY="x", DATABASE_URL="postgres://aptix@db.example:5433/aptix_modes")["DATABASES"][
        "default"
    ]
    assert database["ENGINE"] == "django.db.backends.postgresql"
    assert (database["NAME"], database["USER"], database["HOST"], database["PORT"]) == (
        "aptix_modes",
        "aptix",
        "db.example",
        5433,
    )


def test_postgresql_prepares_statements_unless_turned_off(load_settings):
    url = "postgres://aptix@db.example:5433/aptix_modes"
    options = load_settings(SECRET_KEY="x", DATABASE_URL=url)["DATABASES"]["default"]["OPTIONS"]
    assert (options["server_side_binding"], options["prepare_threshold"]) == (True, 5)
    off = load_settings(SECRET_KEY="x", DATABASE_URL=url, DATABASE_PREPARED_STATEMENTS="0")["DATABASES"]["default"]
    assert "server_side_binding" not in off.get("OPTIONS", {})


def test_behind_a_transaction_pooler_statements_are_prepared_only_when_asked(load_settings):
    # PgBouncer before 1.21 hands a prepared statement to another client: it ran one client's with another's values.
    url = "postgres://aptix@db.example:6432/aptix_modes"
    pooled = load_settings(SECRET_KEY="x", DATABASE_URL=url, DATABASE_POOLER="transaction")["DATABASES"]["default"]
    assert "server_side_binding" not in pooled["OPTIONS"] and pooled["DISABLE_SERVER_SIDE_CURSORS"]
    asked = load_settings(SECRET_KEY="x", DATABASE_URL=url, DATABASE_POOLER="transaction", DATABASE_PREPARED_STATEMENTS="1")
    assert asked["DATABASES"]["default"]["OPTIONS"]["prepare_threshold"] == 5  # PgBouncer 1.21+, max_prepared_statements


def test_sqlite_database_url_selects_that_file(load_settings, tmp_path):
    database = load_settings(SECRET_KEY="x", DATABASE_URL=f"sqlite:///{tmp_path}/db.sqlite3")["DATABASES"]["default"]
    assert database["ENGINE"] == "django.db.backends.sqlite3"
    assert database["NAME"] == f"{tmp_path}/db.sqlite3"


def test_the_running_suite_uses_the_database_make_test_chose(settings):
    expected = "postgresql" if os.environ.get("DATABASE_URL", "").startswith("postgres") else "sqlite3"
    assert settings.DATABASES["default"]["ENGINE"] == f"django.db.backends.{expected}"


def test_a_development_key_file_that_is_a_link_is_refused(load_settings, tmp_path):
    make_key = load_settings(DEBUG="1")["development_secret_key"]
    published = tmp_path / "published"
    published.write_text("a-key-everyone-knows")
    (tmp_path / "key").symlink_to(published)
    with pytest.raises(ImproperlyConfigured, match="it must be a file of this checkout's own, not a link"):
        make_key(tmp_path / "key")


@pytest.mark.parametrize(("value", "loaded"), [(None, "model"), ("user", "user"), ("model", "model")])
def test_mode_change_confirmation_is_model_unless_the_environment_says_user(load_settings, monkeypatch, value, loaded):
    monkeypatch.delenv("MODE_CHANGE_CONFIRMATION", raising=False)
    env = {"MODE_CHANGE_CONFIRMATION": value} if value else {}
    assert load_settings(SECRET_KEY="x", **env)["MODE_CHANGE_CONFIRMATION"] == loaded


def test_an_unknown_mode_change_confirmation_stops_the_settings_from_loading(load_settings):
    with pytest.raises(ImproperlyConfigured, match=r"^MODE_CHANGE_CONFIRMATION must be 'model' or 'user'; it is 'users'\.$"):
        load_settings(SECRET_KEY="x", MODE_CHANGE_CONFIRMATION="users")


def test_no_release_gate_is_set_unless_the_environment_sets_one(load_settings):
    loaded = load_settings(SECRET_KEY="x", CATALOG_EVAL_MIN_ACCURACY="0.85")
    assert (loaded["CATALOG_EVAL_MIN_ACCURACY"], loaded["CATALOG_EVAL_MAX_DROP"]) == (0.85, None)
    assert (loaded["CATALOG_EVAL_SCORER"], loaded["ROUTING_EVAL_THRESHOLD"], loaded["ROUTING_EVAL_TIMEOUT"]) == (
        "offline", 0.3, 30.0
    )
    assert load_settings(SECRET_KEY="x", CATALOG_EVAL_SCORER="llm", CATALOG_APPROVALS="1")["CATALOG_EVAL_SCORER"] == "llm"


@pytest.mark.parametrize(
    "env, message",
    [
        ({"CATALOG_EVAL_MIN_ACCURACY": "90%"}, r"^CATALOG_EVAL_MIN_ACCURACY must be a number from 0 to 1; it is '90%'\.$"),
        ({"CATALOG_EVAL_MAX_DROP": "1.5"}, r"^CATALOG_EVAL_MAX_DROP must be a number from 0 to 1; it is '1.5'\.$"),
        ({"ROUTING_EVAL_TIMEOUT": "nan"}, r"^ROUTING_EVAL_TIMEOUT must be a number 0 or more; it is 'nan'\.$"),
        ({"CATALOG_EVAL_SCORER": "gpt"}, r"^CATALOG_EVAL_SCORER must be 'offline' or 'llm'; it is 'gpt'\.$"),
        ({"CATALOG_EVAL_SCORER": "llm"}, r"^CATALOG_EVAL_SCORER=llm needs CATALOG_APPROVALS of 1 or more"),
    ],
)
def test_a_bad_routing_setting_stops_the_settings_from_loading(load_settings, monkeypatch, env, message):
    for name in ("CATALOG_EVAL_MIN_ACCURACY", "CATALOG_EVAL_MAX_DROP", "CATALOG_EVAL_SCORER", "CATALOG_APPROVALS"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ImproperlyConfigured, match=message):
        load_settings(SECRET_KEY="x", **env)


def test_a_token_lifetime_past_a_hundred_years_refuses_to_start(load_settings):
    # Past datetime's range, every POST /api/token/ was a 500.
    refused = "^API_TOKEN_TTL_DAYS must be a whole number, from 0 to 36500; it is '3000000'.$"
    with pytest.raises(ImproperlyConfigured, match=refused):
        load_settings(SECRET_KEY="x", API_TOKEN_TTL_DAYS="3000000")
    assert load_settings(SECRET_KEY="x", API_TOKEN_TTL_DAYS="36500")["API_TOKEN_TTL_DAYS"] == 36_500


@pytest.mark.parametrize("name", ["TOOL_INVOKE_RATE", "SESSION_CREATE_RATE", "TOKEN_RATE"])
@pytest.mark.parametrize("value", ["abc", "10/fortnight", "10", "10/", "ten/min", "-1/min", "120/m/x"])
def test_a_rate_drf_cannot_read_stops_the_settings_from_loading(load_settings, name, value):
    # Read raw, each request counted against it was a 500.
    refused = rf"^{name} must be requests per sec, min, hour or day, as 120/min; it is '{value}'\.$"
    with pytest.raises(ImproperlyConfigured, match=refused):
        load_settings(SECRET_KEY="x", **{name: value})


def test_a_blank_rate_is_its_default_and_any_period_drf_reads_is_taken(load_settings):
    # DRF reads the period's first letter: 1000/hours worked before these rates were checked, and still does.
    loaded = load_settings(SECRET_KEY="x", SESSION_CREATE_RATE=" ", TOOL_INVOKE_RATE="5/minutes", TOKEN_RATE="1000/hours")
    assert loaded["REST_FRAMEWORK"]["DEFAULT_THROTTLE_RATES"] == {
        "tool-invoke": "5/minutes", "session-create": "30/min", "token": "1000/hours"
    }
