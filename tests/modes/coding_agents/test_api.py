"""POST /api/catalog/import/ and GET /api/catalog/export/: the commands' import and export over REST."""

import json

import pytest
from rest_framework.test import APIClient

from modes.coding_agents.base import mode_id
from modes.models import AgentMode, CatalogHead

from ...conftest import CommitOnceWaitedOn
from .conftest import IMPORTED_KEYS, REPOSITORY

pytestmark = pytest.mark.django_db
IMPORT = "/api/catalog/import/"
FILES = [{"path": path, "content": content} for path, content in REPOSITORY.items()]


@pytest.fixture
def importer(django_user_model):
    """An API client logged in as staff holding the add and change mode permissions, nothing else."""
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user(username="importer", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=["add_agentmode", "change_agentmode"]))
    client = APIClient()
    client.force_login(user)
    return client


def state():
    return list(AgentMode.objects.order_by("pk").values()), CatalogHead.objects.get(pk=1).latest


def test_an_import_creates_every_mode_as_one_revision_and_reports_each_field(importer):
    revision = CatalogHead.objects.get(pk=1).latest
    response = importer.post(IMPORT, {"files": FILES}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["revision"] == revision + 1
    assert [(entry["name"], entry["action"]) for entry in body["entries"]] == [(key, "created") for key in IMPORTED_KEYS]
    assert {line["path"] for line in body["report"]} >= {".roomodes", ".claude/agents/test-runner.md"}
    assert {line["fate"] for line in body["report"]} <= {"carried", "approximated", "dropped"}
    assert body["skipped"] == ["src/app.py"]  # given, and no coding agent's: said, not passed over


def test_a_dry_run_answers_the_plan_and_changes_nothing(importer):
    before = state()
    body = importer.post(IMPORT, {"files": FILES, "dryRun": True}, format="json").json()
    assert body["revision"] is None and len(body["entries"]) == 4
    assert state() == before


def test_bad_files_are_a_400_listing_every_problem_and_nothing_changes(importer):
    before = state()
    files = [*FILES, {"path": ".claude/agents/silent.md", "content": "---\nname: silent\n---\n\nBody\n"},
             {"path": "../.roomodes", "content": "customModes: []\n"}]
    response = importer.post(IMPORT, {"files": files}, format="json")
    assert response.status_code == 400
    problems = response.json()["files"]
    assert any(".claude/agents/silent.md" in problem for problem in problems)
    assert any("'../.roomodes': a path must be relative" in problem for problem in problems)
    assert state() == before


def test_a_path_sent_twice_is_a_400_naming_it_not_one_file_passed_over(importer):
    # A config's prompt file sent twice: one of the two would have been the prompt, the other dropped unsaid.
    config = '{"agent": {"review": {"description": "Reviews.", "prompt": "{file:./prompts/review.txt}"}}}'
    files = [{"path": "opencode.json", "content": config}, {"path": "prompts/review.txt", "content": "First."},
             {"path": "prompts/review.txt", "content": "Second."}]
    before = state()
    response = importer.post(IMPORT, {"files": files, "dryRun": True}, format="json")
    assert response.status_code == 400
    assert response.json()["files"] == [
        "prompts/review.txt: given more than once; a repository has one file at a path."
    ]
    assert state() == before


@pytest.mark.parametrize("permissions", [[], ["add_agentmode"], ["change_agentmode"]])
def test_staff_without_both_mode_permissions_is_refused_and_nothing_changes(django_user_model, permissions):
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user(username="partial", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=permissions))
    client = APIClient()
    client.force_login(user)
    before = state()
    assert client.post(IMPORT, {"files": FILES}, format="json").status_code == 403
    assert state() == before


def test_a_user_who_is_not_staff_is_refused(alice_client):
    assert alice_client.post(IMPORT, {"files": FILES}, format="json").status_code == 403


def test_a_body_over_the_import_limit_is_a_413(importer, settings):
    settings.API_MAX_IMPORT_BYTES = 1000
    settings.API_BODY_LIMITS = {IMPORT: 1000}
    before = state()
    response = importer.post(IMPORT, {"files": FILES}, format="json")
    assert response.status_code == 413
    assert state() == before


def test_an_import_body_may_be_larger_than_other_posts(importer, settings):
    settings.API_MAX_BODY_BYTES = 100
    files = [*FILES, {"path": "notes/large.txt", "content": "x" * 10_000}]
    assert importer.post(IMPORT, {"files": files, "dryRun": True}, format="json").status_code == 200


def test_an_import_body_past_djangos_default_cap_but_within_the_limit_is_taken(importer):
    # 3 MiB: over Django's 2.5 MiB DATA_UPLOAD_MAX_MEMORY_SIZE default, under API_MAX_IMPORT_BYTES (5 MiB).
    files = [*FILES, {"path": "notes/large.txt", "content": "x" * (3 * 1024 * 1024)}]
    assert importer.post(IMPORT, {"files": files, "dryRun": True}, format="json").status_code == 200


@pytest.mark.parametrize(
    "body, field",
    [({}, "files"), ({"files": []}, "files"), ({"files": FILES, "format": "cursor"}, "format"),
     ({"files": FILES, "dryrun": True}, "dryrun"), ({"files": [{"path": ".roomodes"}]}, "files"),
     ({"files": FILES, "update": 0}, "update"), ({"files": FILES, "dryRun": "false"}, "dryRun"),
     ({"files": [{**FILES[0], "path": 7}], "format": "roo"}, "files"),
     ({"files": [{**FILES[0], "mode": "0644"}], "dryRun": True}, "mode")],
    ids=["no-files", "empty", "unknown-format", "unknown-field", "no-content", "update-a-number", "dry-run-text",
         "path-a-number", "unknown-field-of-a-file"],
)
def test_a_malformed_request_is_a_400_naming_the_field_and_changes_nothing(importer, body, field):
    before = state()
    response = importer.post(IMPORT, body, format="json")
    assert response.status_code == 400
    assert field in json.dumps(response.json())
    assert state() == before


@pytest.mark.parametrize("agent", ["roo", "kilo", "opencode", "claude-code"])
def test_any_user_exports_the_published_modes_as_a_coding_agents_files(alice_client, agent):
    response = alice_client.get("/api/catalog/export/", {"format": agent})
    assert response.status_code == 200
    body = response.json()
    assert body["files"] and all(set(file) == {"path", "content"} for file in body["files"])
    # The seed modes keep fields no coding agent has: each is reported, none silently lost.
    assert any(line["fate"] == "dropped" and line["mode"] == "general" for line in body["report"])


def test_an_export_imports_back_through_the_api(importer, alice_client):
    importer.post(IMPORT, {"files": FILES}, format="json")
    query = {"format": "claude-code", "customOnly": "true"}
    exported = alice_client.get("/api/catalog/export/", query).json()["files"]
    assert sorted(file["path"] for file in exported) == sorted(
        f".claude/agents/{key.replace('_', '-')}.md" for key in IMPORTED_KEYS
    )  # the built-in modes left out, as export_modes --custom-only leaves them
    body = importer.post(IMPORT, {"files": exported, "update": True, "dryRun": True}, format="json").json()
    assert [entry["action"] for entry in body["entries"]] == ["unchanged"] * len(IMPORTED_KEYS)


def test_an_export_needs_a_known_format_and_a_token(alice_client):
    assert alice_client.get("/api/catalog/export/", {"format": "cursor"}).status_code == 400
    assert alice_client.get("/api/catalog/export/").status_code == 400
    assert alice_client.get("/api/catalog/export/", {"format": "roo", "customOnly": ""}).status_code == 400
    assert APIClient().get("/api/catalog/export/", {"format": "roo"}).status_code == 401


@pytest.mark.postgres(reason="another connection's uncommitted import, and PostgreSQL's row locks")
@pytest.mark.usefixtures("modes_restored_after_flush")
class TestTwoImportsOfOneKeyAtOnce:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_the_later_updates_the_mode_the_earlier_created_from_another_agents_file(self, importer, second_connection):
        other = second_connection()
        # What a .roomodes import of test-runner writes, committed while this import waits for the catalog's lock.
        roo_id = mode_id("roo", "test-runner")
        other.execute("SELECT 1 FROM modes_cataloghead WHERE id = 1 FOR UPDATE")
        other.execute("CREATE TEMP TABLE copied AS SELECT * FROM modes_agentmode WHERE key = 'general'")
        other.execute(
            "UPDATE copied SET id = %s, key = 'test_runner', display_name = 'Test Runner', is_default = false, "
            "source = 'custom', position = 900", [roo_id],
        )
        other.execute("INSERT INTO modes_agentmode SELECT * FROM copied")
        committer = CommitOnceWaitedOn(other)

        claude = ".claude/agents/test-runner.md"
        files = [{"path": claude, "content": REPOSITORY[claude]}]
        response = importer.post(IMPORT, {"files": files, "update": True}, format="json")
        committer.join()
        assert committer.waited  # the race was run: this import waited for the other to commit

        assert response.status_code == 200, response.content
        mode = AgentMode.objects.get(key="test_runner")
        assert (mode.pk, mode.when_to_use) == (roo_id, "Use proactively to run tests and fix failures.")
