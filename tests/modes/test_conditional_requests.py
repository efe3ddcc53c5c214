"""The catalog endpoints send an ETag derived from the published revision and honour If-None-Match."""

import pytest

from modes.models import AgentMode
from modes.services import record_unrecorded_changes

CATALOG_URLS = ["/api/modes/", "/api/modes/general/", "/api/system-prompt/"]


@pytest.mark.parametrize("url", CATALOG_URLS)
def test_a_matching_if_none_match_is_answered_304_without_a_body(alice_client, url):
    first = alice_client.get(url)
    assert first.status_code == 200
    etag = first["ETag"]
    again = alice_client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304
    assert again.content == b""
    assert again["ETag"] == etag


@pytest.mark.parametrize("url", CATALOG_URLS)
def test_any_catalog_change_changes_the_etag(alice_client, url):
    etag = alice_client.get(url)["ETag"]
    AgentMode.objects.filter(key="general").update(display_name="General (renamed)")
    assert alice_client.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304  # in no revision: not served yet
    record_unrecorded_changes()  # made past the services: served once recorded
    response = alice_client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 200
    assert response["ETag"] != etag


def test_the_304_is_answered_with_only_the_token_and_head_row_queries(alice_client, django_assert_num_queries):
    etag = alice_client.get("/api/modes/")["ETag"]
    with django_assert_num_queries(2):  # the token with its user, the head row
        assert alice_client.get("/api/modes/", HTTP_IF_NONE_MATCH=etag).status_code == 304


def test_a_stale_etag_gets_the_new_body(alice_client):
    etag = alice_client.get("/api/modes/")["ETag"]
    AgentMode.objects.filter(key="general").update(when_to_use="Use this mode for anything at all.")
    record_unrecorded_changes()  # made past the services: served once recorded
    response = alice_client.get("/api/modes/", HTTP_IF_NONE_MATCH=etag)
    general = next(mode for mode in response.json()["modes"] if mode["key"] == "general")
    assert general["systemPromptSummary"] == "Use this mode for anything at all."


def test_anonymous_requests_get_401_not_304(alice_client, anon_client):
    etag = alice_client.get("/api/modes/")["ETag"]
    assert anon_client.get("/api/modes/", HTTP_IF_NONE_MATCH=etag).status_code == 401


@pytest.mark.parametrize(("url", "status"), [
    ("/api/modes/no_such_mode/", 404),
    ("/api/modes/?filter=" + "x" * 300, 400),
    ("/api/system-prompt/?currentMode=" + "x" * 81, 400),
])
@pytest.mark.parametrize("header", ["HTTP_IF_NONE_MATCH", "HTTP_IF_MATCH"])
def test_a_request_in_error_gets_its_error_whatever_its_etag(alice_client, url, status, header):
    # The ETag was judged first: a matching one was a 304 for a mode that does not exist.
    etag = alice_client.get("/api/modes/")["ETag"]
    for sent in (etag, "*", '"another"'):
        assert alice_client.get(url, **{header: sent}).status_code == status, sent
