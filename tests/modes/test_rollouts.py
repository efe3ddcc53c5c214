"""
Staged rollouts (issue 43): a pending revision published to a share of the sessions (and to organizations) first;
each session is always served its cohort's revision, over REST and MCP; promote and abort take effect on the next
request; the share is raised, never lowered; nothing else is published meanwhile; and each write refuses staff
without the publish permission.
"""

import re
import time
import uuid
from io import StringIO
from math import sqrt

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction
from rest_framework.test import APIClient

from modes.catalog import BUCKETS, bucket, published_release
from modes.models import AgentMode, CatalogHead, CatalogRollout
from modes.revisions import RolloutInFlight
from modes.services import catalog_change
from sessions_app.models import AgentSession, ModeChange
from sessions_app.services import create_session

from .test_releases import staff

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

def stage(client, number, **body):
    return client.post(f"/api/catalog/revisions/{number}/publish/", body, format="json")


def served_revision(client, session_id) -> int:
    return client.get(f"/api/sessions/{session_id}/context/").json()["catalogRevision"]


def mcp_served_revision(user, session_id) -> int:
    """The revision agent_list_modes names over MCP, on the session's endpoint (or /mcp/ for None)."""
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "agent_list_modes", "arguments": {}}}
    answer = APIClient().post(
        f"/mcp/sessions/{session_id}/" if session_id else "/mcp/", call, format="json",
        headers={
            "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25",
            "Authorization": f"Bearer {user.api_key}",
        },
    )
    return answer.json()["result"]["structuredContent"]["catalogRevision"]


def test_a_tenth_of_four_thousand_new_sessions_are_served_the_staged_revision_each_always_the_same(
    scout_pending, publisher, alice, alice_client
):
    _, client = publisher
    assert stage(client, scout_pending, share=10).status_code == 200
    release = published_release()
    with transaction.atomic():
        sessions = [create_session(release=release, owner=alice, org=None) for _ in range(4_000)]
    staged = [session for session in sessions if session.catalog_revision == scout_pending]
    # Binomial(4,000, 0.1): mean 400, standard deviation 19; five of them either side.
    assert abs(len(staged) - 400) <= 5 * sqrt(4_000 * 0.1 * 0.9)
    assert {session.catalog_revision for session in sessions} == {1, scout_pending}
    for session in [*staged[:15], *[session for session in sessions if session.catalog_revision == 1][:15]]:
        served = {served_revision(alice_client, session.pk), mcp_served_revision(alice, session.pk)}
        assert served == {session.catalog_revision}, session.pk
        assert served == {served_revision(alice_client, session.pk)}  # and again


def test_a_session_is_in_when_its_bucket_salted_by_the_rollout_falls_in_the_lowest_share(scout_pending, publisher):
    _, client = publisher
    stage(client, scout_pending, share="12.5")
    rollout = CatalogRollout.objects.get()
    release = published_release()
    for _ in range(200):
        session = AgentSession(id=uuid.uuid4(), org=None)
        inside = bucket(salt=rollout.pk, key=session.id) < 1_250
        assert release.catalog_for(session).revision == (scout_pending if inside else 1)
    assert BUCKETS == 10_000


def test_what_names_no_session_is_served_the_control_revision(scout_pending, publisher, alice, alice_client):
    _, client = publisher
    stage(client, scout_pending, share=100)
    assert mcp_served_revision(alice, None) == 1  # MCP on /mcp/
    assert alice_client.get("/api/modes/").json()["catalogRevision"] == 1
    assert "scout" not in alice_client.get("/api/system-prompt/").content.decode()
    listed = alice_client.post("/api/tools/agent_list_modes/invoke/", {}, format="json").json()
    assert '"catalogRevision":1' in listed["result"]


def test_an_organization_named_is_served_the_staged_revision_whatever_the_buckets(
    scout_pending, publisher, alice, bob, alice_client, bob_client
):
    _, client = publisher
    response = stage(client, scout_pending, share=0, organizations=[alice.membership.organization.slug])
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "staged"
    alices = [alice_client.post("/api/sessions/", {}, format="json").json()["id"] for _ in range(3)]
    bobs = [bob_client.post("/api/sessions/", {}, format="json").json()["id"] for _ in range(3)]
    assert [served_revision(alice_client, session) for session in alices] == [scout_pending] * 3
    assert [served_revision(bob_client, session) for session in bobs] == [1] * 3


def test_promote_and_abort_take_effect_on_the_next_request(scout_pending, publisher, alice, alice_client):
    _, client = publisher
    inside, outside = _sessions_either_side(client, scout_pending, alice, share=50)
    assert client.post("/api/catalog/rollout/promote/").status_code == 200
    assert served_revision(alice_client, outside.pk) == scout_pending
    assert alice_client.get("/api/modes/").json()["catalogRevision"] == scout_pending
    assert CatalogHead.objects.get(pk=1).rollout is None


def test_an_abort_serves_every_session_the_control_and_keeps_their_audit_trails(
    scout_pending, publisher, alice, alice_client
):
    _, client = publisher
    inside, _ = _sessions_either_side(client, scout_pending, alice, share=50)
    body = {"sessionId": str(inside.pk), "arguments": {"mode": "scout", "branch": False, "reason": "A look first."}}
    changed = alice_client.post("/api/tools/agent_change_mode/invoke/", body, format="json")
    assert changed.json()["successful"], changed.content
    response = client.post("/api/catalog/rollout/abort/", {"reason": "Sessions stall in scout."}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["state"] == "aborted" and response.json()["endReason"] == "Sessions stall in scout."
    context = alice_client.get(f"/api/sessions/{inside.pk}/context/").json()
    assert context["catalogRevision"] == 1
    assert context["notice"] == (
        "Mode 'scout' of this session is not in the published catalog (revision 1); the default mode 'general' applies."
    )
    trail = alice_client.get(f"/api/sessions/{inside.pk}/mode-changes/").json()["results"]
    assert [(change["toMode"], change["catalogRevision"]) for change in trail] == [("scout", scout_pending)]


def test_a_branch_is_served_its_parents_revision(scout_pending, publisher, alice, alice_client):
    _, client = publisher
    inside, _ = _sessions_either_side(client, scout_pending, alice, share=1)
    body = {"sessionId": str(inside.pk), "arguments": {"mode": "scout", "branch": True, "reason": "In a new one."}}
    result = alice_client.post("/api/tools/agent_change_mode/invoke/", body, format="json").json()
    assert result["successful"], result
    child = result["result"].split('"branchSessionId":"')[1].split('"')[0]
    assert AgentSession.objects.get(pk=child).cohort_key == inside.pk
    assert served_revision(alice_client, child) == scout_pending


def test_the_share_is_raised_keeping_everyone_in_and_never_lowered(scout_pending, publisher, alice):
    _, client = publisher
    stage(client, scout_pending, share=20)
    release = published_release()
    with transaction.atomic():
        sessions = [create_session(release=release, owner=alice, org=None) for _ in range(300)]
    inside = {session.pk for session in sessions if session.catalog_revision == scout_pending}
    assert stage(client, scout_pending, share=40).status_code == 200
    widened = published_release()
    assert inside <= {session.pk for session in sessions if widened.catalog_for(session).revision == scout_pending}
    lowered = stage(client, scout_pending, share=30)
    assert lowered.status_code == 409
    assert "can be raised, never lowered to 30" in lowered.json()["detail"]
    assert CatalogRollout.objects.get().share == 40


def test_nothing_else_is_published_while_a_rollout_is_in_flight(scout_pending, publisher, settings):
    _, client = publisher
    assert client.post(f"/api/catalog/revisions/{scout_pending}/publish/").status_code == 200  # 1 is published before now
    edit_scout("a tour")  # revision 3, staged
    assert stage(client, 3, share=10).status_code == 200
    edit_scout("a map")  # revision 4, pending
    for number in (4, 1):  # a publication, a rollback
        refusal = client.post(f"/api/catalog/revisions/{number}/publish/")
        assert refusal.status_code == 409, refusal.json()
        assert refusal.json()["detail"] == (
            "The rollout of revision 3 to part of the sessions is in flight: promote it to everyone or abort it before "
            "publishing another revision. Nothing changed."
        )
    head = CatalogHead.objects.get(pk=1)
    assert (head.published, head.latest, head.rollout.revision_id) == (2, 4, 3)
    settings.CATALOG_APPROVALS = 0  # an edit would be published at once: refused, nothing recorded
    with pytest.raises(RolloutInFlight):
        edit_scout("a walk")
    assert CatalogHead.objects.get(pk=1).latest == 4
    assert AgentMode.objects.get(key="scout").when_to_use == "Use this mode when the user wants a map."


def edit_scout(wants: str) -> None:
    scout = AgentMode.objects.get(key="scout")
    scout.when_to_use = f"Use this mode when the user wants {wants}."
    with catalog_change(by=None):
        scout.save()


@pytest.mark.parametrize(
    "body, problem",
    [
        ({"share": 101}, "share"),
        ({"share": "1.234"}, "share"),
        ({"share": True}, "share"),
        ({"share": 0}, "share"),
        ({"organizations": ["nobody-has-this"]}, "organizations"),
        ({"share": 5, "guard": {"metric": "declined", "ratio": 2}}, "guard"),
        ({"share": 5, "guard": {"metric": "happiness", "ratio": 2, "minSessions": 5}}, "guard"),
        ({"share": 5, "colour": "green"}, "colour"),
    ],
)
def test_a_bad_staging_is_a_400_naming_its_field_and_changes_nothing(scout_pending, publisher, body, problem):
    _, client = publisher
    response = stage(client, scout_pending, **body)
    assert response.status_code == 400, response.content
    assert problem in response.json(), response.json()
    assert (CatalogRollout.objects.count(), CatalogHead.objects.get(pk=1).published) == (0, 1)


# Python's Decimal() and int() read any script's digits, full-width ones and "1_0"; the schema's numbers are JSON's.
NOT_ASCII_NUMBERS = [
    ({"share": "٥٠"}, "share", "A valid number is required."),
    ({"share": "５０"}, "share", "A valid number is required."),
    ({"share": "1_0"}, "share", "A valid number is required."),
    ({"share": 5, "guard": {"metric": "declined", "ratio": "٢", "minSessions": 5}}, "ratio",
     "A valid number is required."),
    ({"share": 5, "guard": {"metric": "declined", "ratio": 2, "minSessions": "٣"}}, "minSessions",
     "Must be a whole number from 1 to 1000000."),
]


@pytest.mark.parametrize("body, field, message", NOT_ASCII_NUMBERS)
def test_a_number_in_other_digits_than_ascii_is_a_400_naming_its_field_and_changes_nothing(
    scout_pending, publisher, body, field, message
):
    response = stage(publisher[1], scout_pending, **body)
    assert response.status_code == 400, response.content
    answer = response.json()
    assert (answer["guard"] if "guard" in body else answer) == {field: [message]}
    assert (CatalogRollout.objects.count(), CatalogHead.objects.get(pk=1).published) == (0, 1)


def test_a_share_of_many_digits_that_is_no_number_is_refused_at_once(scout_pending, publisher):
    # Within the 64 KiB a body may have: the check for ASCII digits read such text in time growing with its square
    # (twenty seconds of a worker for this one request).
    started = time.monotonic()
    response = stage(publisher[1], scout_pending, share="1" * 60_000 + "x")
    assert (response.status_code, response.json()) == (400, {"share": ["A valid number is required."]})
    assert time.monotonic() - started < 2
    assert not CatalogRollout.objects.exists()


@pytest.mark.parametrize("option, value, message", [
    ("--share", "٥٠", "A valid number is required."),
    ("--guard-ratio", "２", "A valid number is required."),
    ("--guard-min-sessions", "٣", "Must be a whole number from 1 to 1000000."),
])
def test_publish_revision_refuses_a_number_in_other_digits_than_ascii_in_one_line(
    scout_pending, publisher, option, value, message
):
    given = {"--share": "10", "--guard-metric": "declined", "--guard-ratio": "2", "--guard-min-sessions": "3"}
    given[option] = value
    with pytest.raises(CommandError, match=f"^{option}: {message}$"):
        call_command("publish_revision", str(scout_pending), "--user", publisher[0].username,
                     *(word for pair in given.items() for word in pair))
    assert not CatalogRollout.objects.exists()


def test_staff_without_the_publish_permission_can_neither_stage_promote_nor_abort(scout_pending, publisher, alice):
    _, client = publisher
    _, viewer = staff("viewer")  # staff who may read revisions, not publish them
    assert stage(viewer, scout_pending, share=10).status_code == 403
    stage(client, scout_pending, share=10)
    for path in ("promote", "abort"):
        response = viewer.post(f"/api/catalog/rollout/{path}/")
        assert response.status_code == 403
        assert "modes.publish_revision" in response.json()["detail"]
    assert CatalogRollout.objects.get().state == "in_flight"


def test_with_no_rollout_in_flight_promote_and_abort_are_409(scout_pending, publisher):
    _, client = publisher
    for path in ("promote", "abort"):
        response = client.post(f"/api/catalog/rollout/{path}/")
        assert response.status_code == 409
        assert response.json()["detail"] == "No rollout is in flight: nothing to promote or abort."


def test_the_commands_stage_promote_and_abort_and_refuse_in_one_line(scout_pending, publisher, settings):
    user, _ = publisher
    out = StringIO()
    with pytest.raises(CommandError, match="^--organization: No organization has the slug 'nobody-has-this'.$"):
        call_command("publish_revision", str(scout_pending), "--user", user.username, "--organization", "nobody-has-this")
    with pytest.raises(CommandError, match="^--guard-ratio: "):
        call_command(
            "publish_revision", str(scout_pending), "--user", user.username, "--share", "10", "--guard-metric", "declined",
            "--guard-ratio", "lots", "--guard-min-sessions", "5",
        )
    with pytest.raises(CommandError, match="^--guard-metric: "):  # not staged without the guard it asked for
        call_command("publish_revision", str(scout_pending), "--user", user.username, "--share", "10", "--guard-metric", "")
    call_command("publish_revision", str(scout_pending), "--user", user.username, "--share", "10", stdout=out)
    assert out.getvalue() == "Revision 2 is being rolled out.\n"
    call_command("abort_rollout", "--user", user.username, "--reason", "Not now.", stdout=out)
    assert "The rollout of revision 2 is aborted; every session is served revision 1." in out.getvalue()
    call_command("publish_revision", str(scout_pending), "--user", user.username, "--share", "10", "--restart")
    call_command("promote_rollout", "--user", user.username, stdout=out)
    assert out.getvalue().endswith("Revision 2 is published to every session.\n")
    assert CatalogHead.objects.get(pk=1).published == 2
    viewer, _ = staff("viewer")
    with pytest.raises(CommandError, match="^You need the permission modes.publish_revision to abort a rollout.$"):
        call_command("abort_rollout", "--user", viewer.username)


def _sessions_either_side(client, pending, owner, *, share):
    """Stage pending at share; a session of owner's that the rollout serves, and one it does not."""
    assert stage(client, pending, share=share).status_code == 200
    release = published_release()
    inside = outside = None
    while inside is None or outside is None:
        session = create_session(release=release, owner=owner, org=None)
        if session.catalog_revision == pending:
            inside = inside or session
        else:
            outside = outside or session
    assert ModeChange.objects.count() == 0
    return inside, outside


def test_the_releases_page_stages_shows_the_cohorts_and_promotes(scout_pending, publisher, alice, bob, alice_client):
    _, client = publisher
    page = "/admin/modes/catalogrevision/releases/"
    assert "Roll out to part of the sessions" in client.get(page).content.decode()
    refused = client.post(f"{page}2/stage/", {"share": "250"}, follow=True).content.decode()
    assert "Share: Ensure this value is less than or equal to 100." in refused
    form = {"share": "0", "organizations": " acme ", "guard_metric": "declined", "guard_ratio": "2",
            "guard_min_sessions": "50"}
    done = client.post(f"{page}2/stage/", form, follow=True).content.decode()
    assert "Revision 2 is being rolled out." in done
    alice_client.post("/api/sessions/", {}, format="json")
    shown = client.get(page).content.decode()
    assert "Revision 2 is being rolled out to those of acme since" in shown
    assert "proposals the user declined per session are more than 2 times the control's, once 50" in shown
    assert "<tr><th>2 (rolled out)" in shown
    assert shown.split("<tr><th>2 (rolled out)")[1].split("<td>")[1].startswith("1</td>")  # alice's new session
    assert "/admin/sessions_app/modechange/graph/?revision=2" in shown
    assert "Revision 2 is published to every session." in client.post(f"{page}2/promote/", follow=True).content.decode()
    assert "was promoted by publisher" in client.get(page).content.decode()


def test_a_staged_publication_needs_the_approvals_and_passes_the_routing_gate_as_any_publication(
    scout_pending, publisher, settings
):
    _, reviewed_only = staff("careful", "publish_revision")  # may publish, not without the approvals
    refused = stage(reviewed_only, scout_pending, share=10)
    assert refused.status_code == 409
    assert refused.json()["detail"].startswith("Revision 2 has 0 of the 1 approvals it needs")
    settings.CATALOG_EVAL_MIN_ACCURACY = 0.5
    _, client = publisher
    gated = stage(client, scout_pending, share=10)
    assert gated.status_code == 409
    assert gated.json()["detail"].startswith("Revision 2 has no routing evaluation by the offline scorer")
    assert CatalogRollout.objects.count() == 0


def test_only_the_pending_revision_can_be_staged(scout_pending, publisher):
    _, client = publisher
    refused = stage(client, 1, share=10)  # the published one
    assert refused.status_code == 409
    assert refused.json()["detail"] == "Revision 1 is published: only the pending revision can be staged."
    assert CatalogRollout.objects.count() == 0


def test_a_wider_share_is_judged_as_a_publication_and_organizations_alone_keep_the_share(scout_pending, publisher, bob):
    _, client = publisher
    assert stage(client, scout_pending, share=25).status_code == 200  # unreviewed: no approval yet
    _, reviewed_only = staff("careful", "publish_revision")
    refused = stage(reviewed_only, scout_pending, share=100)
    assert refused.status_code == 409 and "approvals it needs" in refused.json()["detail"]
    widened = stage(client, scout_pending, organizations=[bob.membership.organization.slug])
    assert widened.status_code == 200, widened.content
    rollout = CatalogRollout.objects.get()
    assert (rollout.share, list(rollout.organizations.values_list("slug", flat=True))) == (25, ["globex"])


@pytest.mark.parametrize(
    "organization, message",
    [("", "This field may not be blank."), ("a" * 51, "Ensure this field has no more than 50 characters.")],
)
def test_a_bad_organization_option_is_one_line_naming_it(scout_pending, publisher, organization, message):
    user, _ = publisher
    with pytest.raises(CommandError, match=f"^--organization: {message}$"):
        call_command("publish_revision", str(scout_pending), "--user", user.username, "--organization", organization)
    assert not CatalogRollout.objects.exists()


ONE_LINE = "One line, without control characters: messages quote it."


@pytest.mark.parametrize(
    "reason, message, over_rest",
    # A NUL posted to the page (as multipart: urlencoded, the middleware refuses it first) got the pattern's message
    # and DRF's own "Null characters are not allowed." too. Over REST the JSON parser refuses it first, in one.
    [("a\x00b", ONE_LINE, {"detail": "Text in the request body must not contain NUL characters."}),
     ("r" * 1001, "Ensure this field has no more than 1000 characters.", None),
     # Quoted in a later refusal, they broke its one line and coloured the terminal.
     ("line one\nline two", ONE_LINE, None),
     ("\x1b[31mred", ONE_LINE, None),
     ("a reason\n", ONE_LINE, None)],  # judged as sent, then trimmed
    ids=["nul", "too-long", "line-break", "escape", "trailing-line-break"],
)
def test_an_abort_reason_is_refused_with_one_clear_message_over_rest_from_the_page_and_the_command(
    scout_pending, publisher, reason, message, over_rest
):
    user, client = publisher
    assert stage(client, scout_pending, share=10).status_code == 200
    answer = client.post("/api/catalog/rollout/abort/", {"reason": reason}, format="json")
    assert (answer.status_code, answer.json()) == (400, over_rest or {"reason": [message]})
    page = "/admin/modes/catalogrevision/releases/"
    refused = client.post(f"{page}{scout_pending}/abort/", {"reason": reason}, follow=True)
    assert [str(shown) for shown in refused.context["messages"]] == [f"reason: {message}"]
    with pytest.raises(CommandError, match=f"^--reason: {re.escape(message)}$"):
        call_command("abort_rollout", "--user", user.username, "--reason", reason)
    assert CatalogRollout.objects.get().state == CatalogRollout.State.IN_FLIGHT


def test_a_reason_of_spaces_is_no_reason(scout_pending, publisher):
    user, client = publisher
    assert stage(client, scout_pending, share=10).status_code == 200
    call_command("abort_rollout", "--user", user.username, "--reason", "   ", stdout=StringIO())
    assert CatalogRollout.objects.get().end_reason == ""


@pytest.mark.parametrize("ended", [False, True])
def test_an_organization_a_rollout_names_cannot_be_deleted(scout_pending, publisher, alice, admin_client, ended):
    # Deleting it would narrow a rollout in flight (no publish permission needed) or erase whom an ended one served.
    _, client = publisher
    assert stage(client, scout_pending, share=0, organizations=["acme"]).status_code == 200
    if ended:
        assert client.post("/api/catalog/rollout/abort/", {}, format="json").status_code == 200
    acme = alice.membership.organization
    page = admin_client.post(f"/admin/accounts/organization/{acme.pk}/delete/", {"post": "yes"})
    assert "Cannot delete organization" in page.content.decode()
    assert list(CatalogRollout.objects.get().organizations.values_list("slug", flat=True)) == ["acme"]


def test_a_user_who_aborted_a_rollout_cannot_be_deleted_so_the_abort_is_never_read_as_the_guards(
    scout_pending, publisher, admin_client
):
    user, client = publisher
    assert stage(client, scout_pending, share=10).status_code == 200
    assert client.post("/api/catalog/rollout/abort/", {"reason": "Sessions stall."}, format="json").status_code == 200

    refused = admin_client.post(f"/admin/auth/user/{user.pk}/delete/", {"post": "yes"})

    assert "Cannot delete user" in refused.content.decode()
    shown = admin_client.get("/admin/modes/catalogrevision/releases/").content.decode()
    assert "was aborted by publisher at" in shown and "by its guard" not in shown
    assert admin_client.get("/api/catalog/rollout/").json()["endedBy"] == "publisher"


def test_promote_and_abort_naming_another_revision_than_the_one_rolled_out_change_nothing(scout_pending, publisher):
    _, client = publisher
    stage(client, scout_pending, share=10)
    for path in ("promote", "abort"):
        response = client.post(f"/api/catalog/rollout/{path}/", {"revision": 7}, format="json")
        assert response.status_code == 409
        assert response.json()["detail"] == "Revision 7 is not being rolled out; revision 2 is. Nothing changed."
    assert CatalogRollout.objects.get().state == "in_flight"
    assert client.post("/api/catalog/rollout/abort/", {"revision": 2}, format="json").status_code == 200


@pytest.mark.parametrize("number", ["+2", " 2", "2.0", "２", 2**31, 0])
def test_promote_and_abort_take_the_revision_as_a_revision_number_as_urls_and_commands_do(
    scout_pending, publisher, number
):
    _, client = publisher
    stage(client, scout_pending, share=10)
    for path in ("promote", "abort"):
        response = client.post(f"/api/catalog/rollout/{path}/", {"revision": number}, format="json")
        assert response.status_code == 400, response.content
        assert response.json() == {"revision": ["Must be a catalog revision number (1, 2, 3, ...)."]}
    assert CatalogRollout.objects.get().state == "in_flight"
    with pytest.raises(CommandError, match="is not a revision number"):
        call_command("promote_rollout", "--user", "publisher", "--revision", str(number))


def test_a_staged_revision_that_breaks_a_rule_is_neither_widened_nor_promoted(
    scout_pending, publisher, recorded_past_the_rules, monkeypatch
):
    """Staged by a release that lacked a rule it breaks: the rule judges each wider publication, as it judges one."""
    _, client = publisher
    AgentMode.objects.update(is_default=False)  # past the services: the rules ask for a default (modes.E005)
    broken = recorded_past_the_rules().number
    with monkeypatch.context() as release_without_the_rule:
        release_without_the_rule.setattr("modes.releases.validate_catalog", lambda modes: None)
        assert stage(client, broken, share=10).status_code == 200
    rule = f"Revision {broken} cannot be published: This would break the catalog's rules: modes.E005"

    widened = stage(client, broken, share=50)
    assert widened.status_code == 409 and widened.json()["detail"].startswith(rule)
    promoted = client.post("/api/catalog/rollout/promote/", {}, format="json")
    assert promoted.status_code == 409 and promoted.json()["detail"].startswith(rule)
    rollout = CatalogRollout.objects.get()
    assert (rollout.state, rollout.share, CatalogHead.objects.get(pk=1).published) == ("in_flight", 10, 1)
    assert client.post("/api/catalog/rollout/abort/", {}, format="json").status_code == 200


def test_a_staged_revision_is_not_replayed_to_a_session_owner_until_it_is_published(
    scout_pending, publisher, alice, alice_client
):
    _, client = publisher
    inside, _ = _sessions_either_side(client, scout_pending, alice, share=50)
    response = alice_client.get(f"/api/sessions/{inside.pk}/context/", {"revision": scout_pending})
    assert response.status_code == 403
    assert client.post("/api/catalog/rollout/promote/").status_code == 200
    assert alice_client.get(f"/api/sessions/{inside.pk}/context/", {"revision": scout_pending}).status_code == 200


ABORTED_NOT_NOW = (
    "The rollout of revision 2 was aborted (Not now.): a request to raise its share comes too late. To roll it out "
    "again, ask for a restart. Nothing changed."
)
PAGE = "/admin/modes/catalogrevision/releases/"


def page_form(client, number) -> dict:
    """The hidden fields of the releases page's roll-out form, as a browser that opened it posts them back."""
    html = client.get(f"{PAGE}{number}/stage/").content.decode()
    return dict(re.findall(r'<input type="hidden" name="(seen_rollout|restart)" value="([^"]*)">', html))


def test_a_share_raised_after_the_rollout_was_aborted_restarts_nothing_unless_asked(scout_pending, publisher):
    # A request racing the abort, or sent from a stale page: as promote and abort, it must not act on a rollout that
    # ended.
    user, client = publisher
    assert stage(client, scout_pending, share=10).status_code == 200
    assert client.post("/api/catalog/rollout/abort/", {"reason": "Not now."}, format="json").status_code == 200

    late = stage(client, scout_pending, share=50)
    assert (late.status_code, late.json()["detail"]) == (409, ABORTED_NOT_NOW)
    with pytest.raises(CommandError, match=f"^{re.escape(ABORTED_NOT_NOW)}$"):
        call_command("publish_revision", str(scout_pending), "--user", user.username, "--share", "50")
    assert CatalogHead.objects.get(pk=1).rollout is None
    assert list(CatalogRollout.objects.values_list("state", "share")) == [("aborted", 10)]

    assert stage(client, scout_pending, share=50, restart=True).status_code == 200
    assert client.post("/api/catalog/rollout/abort/", {}, format="json").status_code == 200
    call_command("publish_revision", str(scout_pending), "--user", user.username, "--share", "20", "--restart",
                 stdout=StringIO())
    assert [rollout.share for rollout in CatalogRollout.objects.order_by("started_at")] == [10, 50, 20]


def test_the_releases_page_acts_only_on_the_rollout_it_showed(scout_pending, publisher):
    _, client = publisher
    opened_before_any = page_form(client, scout_pending)
    assert opened_before_any == {"seen_rollout": ""}
    assert stage(client, scout_pending, share=10).status_code == 200
    raising_the_first = page_form(client, scout_pending)
    assert client.post("/api/catalog/rollout/abort/", {"reason": "Not now."}, format="json").status_code == 200

    for stale, refusal in (  # someone staged it since the page was opened; someone aborted what it raises
        (opened_before_any, "Revision 2 was staged, promoted or aborted since this page was opened."),
        (raising_the_first, ABORTED_NOT_NOW),
    ):
        refused = client.post(f"{PAGE}{scout_pending}/stage/", {"share": "30", **stale}, follow=True)
        assert refusal in str(list(refused.context["messages"]))
    assert CatalogHead.objects.get(pk=1).rollout is None

    page = client.get(f"{PAGE}{scout_pending}/stage/").content.decode()
    assert "Its last rollout was aborted (Not now.): this rolls it out again." in page
    done = client.post(f"{PAGE}{scout_pending}/stage/", {"share": "30", **page_form(client, scout_pending)}, follow=True)
    assert "Revision 2 is being rolled out." in str(list(done.context["messages"]))
    restarted = client.post(f"{PAGE}{scout_pending}/stage/", {"share": "40", **raising_the_first}, follow=True)
    assert "since this page was opened" in str(list(restarted.context["messages"]))  # the first rollout's page
    assert [rollout.share for rollout in CatalogRollout.objects.order_by("started_at")] == [10, 30]


@pytest.mark.parametrize("number", ["9" * 20, "999"])  # past the column's range (a 500 on PostgreSQL); not there
@pytest.mark.parametrize("action", ["stage", "publish"])
def test_an_action_page_for_a_revision_that_does_not_exist_is_a_404_and_its_post_changes_nothing(
    admin_client, action, number
):
    assert admin_client.get(f"{PAGE}{number}/{action}/").status_code == 404

    refused = admin_client.post(f"{PAGE}{number}/{action}/", {"share": "10"}, follow=True)

    assert f"no catalog revision {number}" in str(list(refused.context["messages"]))
    assert CatalogHead.objects.get(pk=1).rollout is None


def test_catalog_status_names_the_rollout_in_flight_and_publish_revision_the_command_that_promotes_it(
    scout_pending, publisher
):
    user, client = publisher
    assert stage(client, scout_pending, share=10).status_code == 200
    status = StringIO()

    call_command("catalog_status", stdout=status)

    assert status.getvalue().splitlines()[1] == (
        f"Rolling out: revision {scout_pending} to 10% of the sessions, 0 of 1 approvals; promote_rollout serves it to "
        "everyone, "
        "abort_rollout ends it."
    )
    with pytest.raises(CommandError, match=r"promote it to everyone \(promote_rollout, POST /api/catalog/rollout/"):
        call_command("publish_revision", str(scout_pending), "--user", user.username)


def test_a_request_is_served_the_release_of_the_head_it_read_though_another_thread_caches_another(
    scout_pending, publisher, monkeypatch
):
    """The process's cached release is read once: another thread's write between its check and its use (a request
    that read an older head) never hands this one a release of another head."""
    from modes import catalog

    _, client = publisher
    current = published_release()
    assert stage(client, scout_pending, share=10).status_code == 200
    staged = published_release()  # cached now, with its head
    head, _ = catalog._release

    class ReplacedOnceCompared(tuple):
        def __eq__(self, other):
            catalog._release = ((0, None, None, None), current)  # another thread's write, just after this check
            return tuple.__eq__(self, other)

        __hash__ = tuple.__hash__

    monkeypatch.setattr(catalog, "_release", (ReplacedOnceCompared(head), staged))
    assert published_release() is staged


def test_the_releases_page_shows_the_staged_revision_s_changes_and_approvals_and_lets_an_approver_approve_it(
    scout_pending, publisher
):
    # Staged unreviewed by a publisher who may, it waits on an approval before a plain publisher may promote it.
    _, client = publisher
    assert stage(client, scout_pending, share=10).status_code == 200
    # Not offered to who may not approve (the publisher), and refused if posted anyway: nothing is recorded.
    assert f'href="{PAGE}2/approve/"' not in client.get(PAGE).content.decode()
    assert client.get(f"{PAGE}2/approve/").status_code == 403
    client.post(f"{PAGE}2/approve/")
    assert not CatalogRollout.objects.get().revision.approvals.exists()
    _, approver = staff("approver", "approve_revision")
    shown = approver.get(PAGE).content.decode()
    rollout = shown.split('id="rollout"')[1].split('id="pending"')[0]
    assert "0 of 1 approvals" in rollout
    assert "<code>scout</code>" in rollout  # what it changes, as the pending revision's changes are shown
    assert f'href="{PAGE}2/approve/"' in rollout
    assert "Revision 2 is approved." in approver.post(f"{PAGE}2/approve/", follow=True).content.decode()
    shown = approver.get(PAGE).content.decode().split('id="rollout"')[1].split('id="pending"')[0]
    assert "1 of 1 approvals (approver at" in shown
    assert f'href="{PAGE}2/approve/"' not in shown  # approved once
    _, plain_publisher = staff("plain", "publish_revision")
    assert plain_publisher.post("/api/catalog/rollout/promote/", {}, format="json").status_code == 200
