"""
The published contract: drf-spectacular's OpenAPI 3 schema at /api/schema/ and Swagger UI at /api/docs/, served
by the app itself (no CDN), describing every operation's request body and every status it can answer.

The schema is checked three ways: drf-spectacular's own validation with warnings as errors, a committed
snapshot (tests/aptix_site/openapi.yaml) that must equal the generated schema, and Schemathesis (test_api_fuzz), which
checks the responses against it.
"""

import difflib
import re
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt
from django.contrib.auth.models import Permission
from django.contrib.staticfiles import finders
from django.core.management import call_command
from rest_framework.test import APIClient

from ..expected import refusal_at

SNAPSHOT = Path(__file__).with_name("openapi.yaml")
REGENERATE = "python manage.py spectacular --file tests/aptix_site/openapi.yaml"

PUBLIC_OPERATIONS = {"obtainToken"}
# operationId -> the statuses it must document, besides 200/201 (see the views: throttles, ownership, bodies).
REQUIRED_ERRORS = {
    "listModes": {400, 401},
    "getMode": {400, 401, 404},
    "getModeTools": {400, 401, 404},
    "getSystemPrompt": {400, 401},
    "listCatalogRevisions": {400, 401, 404},
    "getCatalogRevision": {400, 401, 404},
    "diffCatalogRevision": {400, 401, 403, 404},
    "approveCatalogRevision": {401, 403, 404, 409},
    "publishCatalogRevision": {400, 401, 403, 404, 409},
    "promoteCatalogRollout": {400, 401, 403, 409},
    "abortCatalogRollout": {400, 401, 403, 409},
    "getCatalogRollout": {401, 403, 404},
    "getCatalogTransitions": {400, 401, 403, 404},
    "listTools": {400, 401},
    "invokeTool": {400, 401, 403, 404, 405, 409, 411, 413, 415, 429, 500, 503},
    "listSessions": {400, 401, 404},
    "createSession": {400, 401, 403, 411, 413, 415, 429},
    "getSession": {400, 401, 404},
    "listSessionModeChanges": {400, 401, 404},
    "getSessionContext": {400, 401, 404},
    "answerModeChangeConfirmation": {400, 401, 404, 409, 410, 411, 413, 415, 429, 500, 503},
    "importCodingAgentFiles": {400, 401, 403, 411, 413, 415},
    "exportCodingAgentFiles": {400, 401},
    "listRoutingCases": {400, 401, 403, 404},
    "createRoutingCase": {400, 401, 403, 411, 413, 415},
    "evaluateCatalogRevision": {401, 403, 404},
    "latestCatalogRevisionEvaluation": {400, 401, 403, 404},
    "obtainToken": {400, 409, 411, 413, 415, 429},
}


def generate_schema_text(tmp_path) -> str:
    target = tmp_path / "openapi.yaml"
    call_command("spectacular", file=str(target))
    return target.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def schema(tmp_path_factory):
    return yaml.safe_load(generate_schema_text(tmp_path_factory.mktemp("schema")))


def operations(schema):
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation


def prose(node, where="#"):
    """(where, text) for every description and summary in the schema: Markdown that Swagger UI renders."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in {"description", "summary"} and isinstance(value, str):
                yield f"{where}/{key}", value
            else:
                yield from prose(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from prose(value, f"{where}/{index}")


def raw_html(markdown: str) -> list[str]:
    """What Markdown with HTML allowed, as Swagger UI renders it, would take for HTML tags (and then drop)."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    inline = [child for token in tokens for child in (token.children or [])]
    return [token.content for token in [*tokens, *inline] if token.type in {"html_inline", "html_block"}]


def test_no_description_loses_text_to_html_in_swagger_ui(schema):
    assert {where: raw_html(text) for where, text in prose(schema) if raw_html(text)} == {}


def test_the_check_sees_a_placeholder_that_swagger_ui_would_take_for_a_tag():
    assert raw_html("a token (Authorization: Token <key>)") == ["<key>"]
    assert raw_html("a token (`Authorization: Token <key>`)") == []


def test_the_description_names_the_token_header_whole(schema):
    assert "`Authorization: Token <key>`" in schema["info"]["description"]


def test_spectacular_validates_the_schema_with_warnings_as_errors(tmp_path):
    # --fail-on-warn turns any drf-spectacular warning (an undocumented view, an unresolvable field) into an error;
    # --validate checks the result against the OpenAPI 3 JSON schema.
    call_command("spectacular", validate=True, fail_on_warn=True, file=str(tmp_path / "schema.yaml"))
    assert (tmp_path / "schema.yaml").stat().st_size > 0


def test_the_committed_snapshot_equals_the_generated_schema(tmp_path):
    generated = generate_schema_text(tmp_path)
    committed = SNAPSHOT.read_text(encoding="utf-8") if SNAPSHOT.exists() else ""
    if generated != committed:
        diff = "".join(
            difflib.unified_diff(
                committed.splitlines(keepends=True),
                generated.splitlines(keepends=True),
                "tests/aptix_site/openapi.yaml (committed)",
                "generated from the views",
            )
        )
        pytest.fail(
            "The views no longer match the committed OpenAPI schema. If the change is intended, regenerate it "
            f"with:\n\n    {REGENERATE}\n\nand commit tests/aptix_site/openapi.yaml.\n\n{diff[:6000]}",
            pytrace=False,
        )


def test_the_schema_endpoint_is_public_and_serves_the_same_openapi_3_document(schema):
    client = APIClient()
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.oai.openapi+json")
    served = response.json()
    assert served["openapi"].startswith("3.")
    assert served == schema

    # Public by design: even a broken Authorization header does not stop it.
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert client.get("/api/schema/").status_code == 200


def _static_assets(html):
    return re.findall(r"""(?:src|href)=["']([^"']+)["']""", html)


def test_swagger_ui_is_public_and_loads_only_assets_served_by_the_app_itself():
    client = APIClient()
    response = client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()

    # No CDN: not a single absolute URL; every asset comes from the sidecar package or this app under /static/,
    # and the start-up script (split out of the page, for its Content-Security-Policy) from the page's own URL.
    assert re.findall(r"https?://", html) == []
    assets = _static_assets(html)
    assert {Path(asset).name for asset in assets} >= {
        "swagger-ui.css",
        "swagger-ui-bundle.js",
        "swagger-ui-standalone-preset.js",
        "favicon-32x32.png",
        "api_docs.css",
    }
    script = next(asset for asset in assets if asset.startswith("/api/docs/?script"))
    started = client.get(script)
    assert started["Content-Type"].startswith("application/javascript")
    assert 'url: "/api/schema/"' in started.content.decode()
    for asset in set(assets) - {script}:
        assert asset.startswith(("/static/drf_spectacular_sidecar/", "/static/front_door/")), asset
        served = client.get(asset)
        assert served.status_code == 200, asset
        body = b"".join(served.streaming_content) if served.streaming else served.content
        # The very file the drf-spectacular-sidecar package (or this app) ships.
        assert body == Path(finders.find(asset.removeprefix("/static/"))).read_bytes(), asset
    assert client.get("/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")[
        "Content-Type"
    ].startswith("text/javascript")


def test_every_operation_documents_the_error_statuses_its_view_can_answer(schema):
    documented = {}
    for path, method, operation in operations(schema):
        documented[operation["operationId"]] = {int(code) for code in operation["responses"]}
    assert set(documented) == set(REQUIRED_ERRORS), "an operation was added or removed: update REQUIRED_ERRORS"
    missing = {
        operation_id: sorted(codes - documented[operation_id])
        for operation_id, codes in REQUIRED_ERRORS.items()
        if codes - documented[operation_id]
    }
    assert missing == {}


def test_every_post_documents_the_411_413_and_415_its_body_can_get(schema):
    # The middleware and the parsers answer them before any view: a chunked body, one over its limit, one not JSON.
    missing = {
        operation["operationId"]: sorted({"411", "413", "415"} - set(operation["responses"]))
        for _, method, operation in operations(schema)
        if method == "post" and {"411", "413", "415"} - set(operation["responses"])
    }
    assert missing == {}


def test_every_operation_documents_the_414_nginx_answers_for_a_request_line_over_8_kib(schema):
    # deploy/nginx.conf answers it before the app, to any URL; Schemathesis' ST103 caught it undocumented.
    documented = {operation["operationId"]: "414" in operation["responses"] for _, _, operation in operations(schema)}
    assert [operation_id for operation_id, has_414 in documented.items() if not has_414] == []


def test_every_operation_with_a_body_documents_the_400_of_an_unknown_field(schema):
    # Every request serializer refuses fields it does not know; Schemathesis as staff caught promote's missing.
    undocumented = [operation["operationId"] for _, _, operation in operations(schema)
                    if "requestBody" in operation and "400" not in operation["responses"]]
    assert undocumented == []


def test_every_cursor_list_documents_the_404_of_a_cursor_it_did_not_give(schema):
    undocumented = [operation["operationId"] for _, _, operation in operations(schema)
                    if any(parameter["name"] == "cursor" for parameter in operation.get("parameters", []))
                    and "404" not in operation["responses"]]
    assert undocumented == []


def test_every_error_response_is_json_and_names_the_problem(schema):
    for path, method, operation in operations(schema):
        for code, response in operation["responses"].items():
            if int(code) >= 400:
                assert list(response["content"]) == ["application/json"], (path, method, code)
                assert response["description"], (path, method, code)


def test_only_the_token_endpoint_is_documented_as_public(schema):
    for path, method, operation in operations(schema):
        security = operation.get("security")
        if operation["operationId"] in PUBLIC_OPERATIONS:
            assert not security, operation["operationId"]
            assert "401" not in operation["responses"]
        else:
            assert security == [{"tokenAuth": []}, {"cookieAuth": []}], operation["operationId"]
    assert schema["components"]["securitySchemes"]["tokenAuth"] == {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "description": 'Token-based authentication with required prefix "Token"',
    }


def _body_schema(schema, operation):
    reference = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    return schema["components"]["schemas"][reference.rsplit("/", 1)[-1]]


def test_every_write_documents_its_real_request_body(schema):
    writes = {
        operation["operationId"]: operation for path, method, operation in operations(schema) if method == "post"
    }
    assert set(writes) == {
        "invokeTool", "createSession", "obtainToken", "approveCatalogRevision", "publishCatalogRevision",
        "answerModeChangeConfirmation", "importCodingAgentFiles", "createRoutingCase", "evaluateCatalogRevision",
        "promoteCatalogRollout", "abortCatalogRollout",
    }
    # The revision is in the path; no body.
    for release in ("approveCatalogRevision", "evaluateCatalogRevision"):
        assert "requestBody" not in writes[release]
    assert set(_body_schema(schema, writes["promoteCatalogRollout"])["properties"]) == {"revision"}
    # A publication's body stages it, optional: without one, the revision is published to everyone.
    staged = _body_schema(schema, writes["publishCatalogRevision"])
    assert staged["additionalProperties"] is False and "required" not in staged
    assert set(staged["properties"]) == {"share", "organizations", "guard", "restart"}
    assert writes["publishCatalogRevision"]["requestBody"].get("required") is not True
    assert set(_body_schema(schema, writes["abortCatalogRollout"])["properties"]) == {"revision", "reason"}

    invocation = _body_schema(schema, writes["invokeTool"])
    # Unknown fields are refused with a 400 naming them, and the schema says so.
    assert invocation["additionalProperties"] is False
    assert set(invocation["properties"]) == {"arguments", "sessionId", "conversationId"}
    assert invocation["properties"]["arguments"]["oneOf"] == [
        {"type": "object", "additionalProperties": {}},
        {"type": "string"},
    ]
    assert invocation["properties"]["sessionId"]["format"] == "uuid"
    assert invocation["properties"]["conversationId"]["maxLength"] == 200

    imported = _body_schema(schema, writes["importCodingAgentFiles"])
    assert imported["additionalProperties"] is False
    assert set(imported["properties"]) == {"files", "format", "dryRun", "update"}
    assert imported["required"] == ["files"]

    case = _body_schema(schema, writes["createRoutingCase"])
    assert case["additionalProperties"] is False
    assert set(case["properties"]) == {"utterance", "currentMode", "expected"}
    assert sorted(case["required"]) == ["expected", "utterance"]

    session = _body_schema(schema, writes["createSession"])
    assert session["additionalProperties"] is False
    assert session["properties"]["title"]["maxLength"] == 200
    assert session["properties"]["mode"]["maxLength"] == 64

    token = writes["obtainToken"]["requestBody"]
    assert token["required"] is True
    assert set(token["content"]) == {"application/json", "application/x-www-form-urlencoded"}


def test_query_parameters_carry_their_limits(schema):
    parameters = {
        (operation["operationId"], parameter["name"]): parameter["schema"]
        for path, method, operation in operations(schema)
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "query"
    }
    assert parameters[("listModes", "filter")]["maxLength"] == 200
    assert parameters[("listModes", "includeExamples")]["type"] == "boolean"
    assert parameters[("getSystemPrompt", "currentMode")]["maxLength"] == 64
    assert parameters[("listSessions", "pageSize")]["type"] == "integer"


@pytest.mark.django_db
def test_methods_the_schema_does_not_list_are_answered_405_with_the_documented_methods_in_allow(
    schema, staff_user, staff_api_client
):
    # As staff, whom every endpoint serves (a caller an endpoint refuses is answered 401 or 403 first).
    staff_user.user_permissions.add(*Permission.objects.filter(codename__in=[
        "add_agentmode", "change_agentmode", "view_routingcase", "add_routingcase", "view_routingevaluation",
        "add_routingevaluation",
    ]))
    concrete = {"{key}": "general", "{session_id}": "00000000-0000-4000-8000-000000000000", "{name}": "agent_list_modes",
                "{confirmation_id}": "00000000-0000-4000-8000-000000000000"}
    for path, methods in schema["paths"].items():
        url = path
        for placeholder, value in concrete.items():
            url = url.replace(placeholder, value)
        documented = {method.upper() for method in methods}
        for method in {"GET", "POST", "PUT", "PATCH", "DELETE"} - documented:
            response = staff_api_client.generic(method, url)
            assert response.status_code == 405, (method, path)
            assert response.json() == refusal_at(url, {"detail": f'Method "{method}" not allowed.'})
            allowed = {item.strip() for item in response["Allow"].split(",")}
            assert allowed - {"HEAD", "OPTIONS"} == documented, (method, path, allowed)
