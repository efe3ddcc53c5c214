"""GET /healthz and /readyz: public JSON for load balancers and orchestrators, 200 or 503, nothing sensitive."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import override_settings

from modes.catalog import published_catalog
from modes.models import AgentMode

from ..servers import free_port, redis_server

pytestmark = pytest.mark.django_db


def test_healthz_says_the_process_is_up_without_touching_the_database(anon_client, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = anon_client.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})
    assert "no-cache" in response["Cache-Control"]


def test_readyz_is_ready_on_a_sound_catalog(anon_client):
    response = anon_client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok", "checks": {"database": "ok", "catalog": "ok", "cache": "per-process"}
    }


def test_readyz_is_503_on_a_broken_published_catalog_and_says_no_more(
    anon_client, unconstrained_catalog, recorded_past_the_rules
):
    AgentMode.objects.update(is_default=False)
    assert recorded_past_the_rules("modes.E005").number == published_catalog().revision == 2
    response = anon_client.get("/readyz")
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable", "checks": {"database": "ok", "catalog": "broken", "cache": "per-process"}
    }


def test_readyz_is_ready_while_a_broken_change_past_the_services_is_not_served(anon_client, unconstrained_catalog):
    AgentMode.objects.update(is_default=False)  # agents are still served the sound revision before it
    ready = {"status": "ok", "checks": {"database": "ok", "catalog": "ok", "cache": "per-process"}}
    response = anon_client.get("/readyz")
    assert (response.status_code, response.json()) == (200, ready)
    with pytest.raises(CommandError, match=r"^This would break the catalog's rules: modes\.E005: "):
        call_command("record_revision", stdout=StringIO())  # refused: nothing recorded, nothing published
    response = anon_client.get("/readyz")
    assert (response.status_code, response.json()) == (200, ready)


def test_readyz_is_503_when_the_database_fails(anon_client):
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE modes_cataloghead RENAME TO modes_cataloghead_gone")
    response = anon_client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["database"] == "unavailable"
    for leak in ("modes_cataloghead", "Traceback", "relation", "table"):
        assert leak not in response.content.decode()


def test_a_redis_outage_is_degraded_but_still_ready(anon_client, settings):
    port = free_port()
    redis_cache = {
        "default": {
            "BACKEND": "aptix_site.cache.FailoverRedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
    with override_settings(CACHES=redis_cache):
        with redis_server(port):
            up = anon_client.get("/readyz")
        down = anon_client.get("/readyz")
    assert (up.status_code, up.json()["status"], up.json()["checks"]["cache"]) == (200, "ok", "ok")
    assert (down.status_code, down.json()["status"], down.json()["checks"]["cache"]) == (200, "degraded", "unavailable")
    assert str(port) not in down.content.decode()


@pytest.mark.parametrize("url", ["/healthz", "/readyz"])
def test_health_endpoints_take_no_writes(anon_client, url):
    assert anon_client.post(url).status_code == 405
    assert anon_client.head(url).status_code == 200
