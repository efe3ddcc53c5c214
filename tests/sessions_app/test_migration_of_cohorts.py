"""
Upgrading an install with branched sessions (sessions_app 0007): `manage.py migrate` gives every branch the root of
its family as the key of its cohort, so that a rollout serves a branch made before the upgrade its root's revision
too; a session whose parent was deleted is its own root. On a scratch database of the suite's kind.
"""

from ..expected import GENERAL_ID
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
print(json.dumps({"root": str(root.pk), "child": str(child.pk), "grandchild": str(grandchild.pk), "orphan": str(orphan.pk)}))
"""

KEYS = """
import json
from sessions_app.models import AgentSession
print(json.dumps({str(session.pk): str(session.cohort_key) for session in AgentSession.objects.all()}))
"""


def test_branches_made_before_the_upgrade_share_their_roots_cohort():
    with scratch_database(migrated=False) as env:
        run_manage(env, "migrate", "sessions_app", "0007", "--noinput", "-v0", timeout=180)
        sessions = run_django_json(env, BRANCHED.replace("GENERAL_ID", repr(GENERAL_ID)))
        run_manage(env, "migrate", "--noinput", "-v0", timeout=180)
        keys = run_django_json(env, KEYS)
    root = sessions["root"]
    assert [keys[sessions[name]] for name in ("root", "child", "grandchild")] == [root, root, root]
    assert keys[sessions["orphan"]] == sessions["orphan"]
