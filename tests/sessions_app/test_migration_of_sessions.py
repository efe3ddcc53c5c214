"""
Upgrading an install from sessions_app 0007: `manage.py migrate` gives every branch the root of its family as the
key of its cohort, so that a rollout serves a branch made before the upgrade its root's revision too; a session whose
parent was deleted is its own root. An open question learns the session's last mode change before it (0009). On one
scratch database of the suite's kind, upgraded once for the module.
"""

import pytest

from ..expected import DDR_ID, GENERAL_ID
from ..servers import run_django_json, run_manage, scratch_database

# Through the models as sessions_app 0007 had them.
BRANCHED = """
import json
from django.db import connection
from django.db.migrations.loader import MigrationLoader
old = MigrationLoader(connection).project_state(("sessions_app", "0007_the_user_confirms_mode_changes")).apps
AgentSession = old.get_model("sessions_app", "AgentSession")
owner = old.get_model("auth", "User").objects.create(username="owner")
root = AgentSession.objects.create(owner=owner, mode_id=GENERAL_ID)
child = AgentSession.objects.create(owner=owner, mode_id=root.mode_id, parent=root)
grandchild = AgentSession.objects.create(owner=owner, mode_id=root.mode_id, parent=child)
orphan = AgentSession.objects.create(owner=owner, mode_id=root.mode_id, parent=None)
ids = {"root": str(root.pk), "child": str(child.pk), "grandchild": str(grandchild.pk), "orphan": str(orphan.pk)}
from datetime import timedelta
from django.utils import timezone
now = timezone.now()
ModeChange = old.get_model("sessions_app", "ModeChange")
Question = old.get_model("sessions_app", "ModeChangeConfirmation")
def change(at):
    return ModeChange.objects.create(
        session=root, from_mode_id=GENERAL_ID, to_mode_id=GENERAL_ID, reason="r", changed_at=at
    ).pk
def question(**answer):
    return str(Question.objects.create(session=root, channel="rest", from_mode_id=GENERAL_ID, to_mode_id=DDR_ID,
                                       reason="r", branch=False, question="?", expires_at=now, **answer).pk)
ids["change_before"] = change(now - timedelta(minutes=1))
ids["open"], ids["answered"] = question(), question(choice="stay", answered_at=now)
ids["change_after"] = change(now + timedelta(minutes=1))
print(json.dumps(ids))
"""

UPGRADED = """
import json
from sessions_app.models import AgentSession, ModeChangeConfirmation
print(json.dumps({
    "keys": {str(session.pk): str(session.cohort_key) for session in AgentSession.objects.all()},
    "after_change": {str(question.pk): question.after_change for question in ModeChangeConfirmation.objects.all()},
}))
"""


@pytest.fixture(scope="module")
def upgrade():
    """What was written under 0007, and what the upgraded install reads of it."""
    with scratch_database(migrated=False) as env:
        run_manage(env, "migrate", "sessions_app", "0007", "--noinput", "-v0", timeout=180)
        written = run_django_json(env, BRANCHED.replace("GENERAL_ID", repr(GENERAL_ID)).replace("DDR_ID", repr(DDR_ID)))
        run_manage(env, "migrate", "--noinput", "-v0", timeout=180)
        return written, run_django_json(env, UPGRADED)


def test_branches_made_before_the_upgrade_share_their_roots_cohort(upgrade):
    sessions, upgraded = upgrade
    keys = upgraded["keys"]
    root = sessions["root"]
    assert [keys[sessions[name]] for name in ("root", "child", "grandchild")] == [root, root, root]
    assert keys[sessions["orphan"]] == sessions["orphan"]


def test_an_open_question_asked_before_the_upgrade_knows_the_last_change_before_it(upgrade):
    written, upgraded = upgrade
    # So the change after it still outdates it; an answered question is never judged again.
    assert upgraded["after_change"] == {written["open"]: written["change_before"], written["answered"]: None}
