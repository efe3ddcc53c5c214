"""
The rules that keep a mode (the default, the built-in ones, those sessions use): the services and the admin enforce
them. A deletion made in a shell, past the services, is not refused, but it is in no revision, so agents are not
served it; recording it (record_revision) judges it by the catalog's rules and the deletion rules.
"""

import re

import pytest

from modes.catalog import published_catalog, published_release
from modes.models import AgentMode, CatalogHead, CatalogRevision
from modes.services import ModeDeletionRefused, ModeInUse, delete_modes, record_unrecorded_changes

from sessions_app.models import AgentSession
from sessions_app.services import create_session

from ..conftest import CommitOnceWaitedOn
from ..expected import DDR_ID, GENERAL_ID

pytestmark = pytest.mark.django_db

DEFAULT_REFUSAL = "'general' is the default mode; make another mode the default first."
BUILTIN_REFUSAL = "'ddr_authoring' is a built-in mode that AGN-014 requires; set its status to deprecated instead."


def latest_revision() -> int:
    return CatalogHead.objects.get(pk=1).latest


def test_a_shell_delete_of_the_default_mode_is_not_served_and_recording_it_is_refused_by_the_deletion_rule():
    # No receiver refuses it any more: the rows lose the default, and record_revision refuses to record that.
    before = latest_revision()
    AgentMode.objects.get(key="general").delete()

    assert published_catalog().by_id[GENERAL_ID].is_default  # agents are still served the default
    with pytest.raises(ModeDeletionRefused, match=re.escape(DEFAULT_REFUSAL)):
        record_unrecorded_changes()
    assert latest_revision() == before  # nothing recorded
    assert published_catalog().default.key == "general"


def test_a_shell_queryset_delete_with_a_builtin_mode_in_it_is_not_served_until_recorded(custom_mode):
    # The built-in rule belongs to the services (delete_modes, the admin), not to a receiver: the shell's delete goes
    # through, and agents keep both modes until record_revision records it.
    before = latest_revision()
    AgentMode.objects.filter(key__in=["research", "ddr_authoring"]).delete()
    assert AgentMode.objects.count() == 2
    assert {"research", "ddr_authoring"} <= set(published_catalog().by_key)
    assert latest_revision() == before
    assert published_catalog().by_id[DDR_ID].key == "ddr_authoring"
    with pytest.raises(ModeDeletionRefused, match=re.escape(BUILTIN_REFUSAL)):
        record_unrecorded_changes()  # record_revision holds it to the deletion rules too
    assert latest_revision() == before


def test_a_shell_delete_of_a_custom_mode_that_is_not_the_default_is_served_once_recorded(custom_mode):
    AgentMode.objects.filter(key="research").delete()
    assert not AgentMode.objects.filter(key="research").exists()
    assert "research" in published_catalog().by_key

    revision = record_unrecorded_changes()

    assert revision.summary == "mode research deleted"
    assert "research" not in published_catalog().by_key


def test_the_service_names_every_mode_that_must_stay_and_deletes_none(custom_mode):
    with pytest.raises(ModeDeletionRefused) as refused:
        delete_modes(modes=AgentMode.objects.filter(key__in=["general", "ddr_authoring", "research"]))
    assert str(refused.value) == f"{DEFAULT_REFUSAL} {BUILTIN_REFUSAL}"
    assert AgentMode.objects.count() == 4


def test_the_service_refuses_a_mode_that_sessions_use(alice, custom_mode):
    from sessions_app.services import create_session

    create_session(release=published_release(), owner=alice, org=None, mode_key="research", title="Research session")
    with pytest.raises(ModeInUse, match="'research' is a mode that sessions use"):
        delete_modes(modes=[custom_mode])
    assert AgentMode.objects.filter(key="research").exists()


def test_the_service_deletes_a_custom_mode_in_a_revision_of_its_own(admin_user, custom_mode):
    before = CatalogRevision.objects.count()
    delete_modes(modes=[custom_mode], deleted_by=admin_user)
    latest = CatalogRevision.objects.first()
    assert not AgentMode.objects.filter(key="research").exists()
    assert (CatalogRevision.objects.count(), latest.created_by) == (before + 1, admin_user)


def published_revision() -> int:
    return CatalogHead.objects.get(pk=1).published


def test_a_rollback_deletes_the_default_it_replaces_making_the_revisions_own_the_default(admin_user, new_mode):
    from modes.releases import publish_revision
    from modes.services import set_default_mode

    before = published_revision()
    research = new_mode("research")
    set_default_mode(mode=research)

    publish_revision(number=before, user=admin_user)

    assert not AgentMode.objects.filter(key="research").exists()
    assert list(AgentMode.objects.filter(is_default=True).values_list("key", flat=True)) == ["general"]


def test_a_rollback_to_a_default_deleted_since_creates_it_again_as_the_default(admin_user, new_mode):
    from modes.releases import publish_revision
    from modes.services import set_default_mode

    set_default_mode(mode=new_mode("research"))
    with_research = published_revision()
    set_default_mode(mode=AgentMode.objects.get(key="general"))
    delete_modes(modes=[AgentMode.objects.get(key="research")])

    publish_revision(number=with_research, user=admin_user)

    assert list(AgentMode.objects.filter(is_default=True).values_list("key", flat=True)) == ["research"]
    assert published_catalog().default.key == "research"


def test_a_rollback_that_would_delete_a_mode_sessions_use_is_refused_and_changes_nothing(alice, admin_user, new_mode):
    from modes.releases import ReleaseConflict, publish_revision
    from sessions_app.services import create_session

    before = published_revision()
    new_mode("research")
    create_session(release=published_release(), owner=alice, org=None, mode_key="research", title="Research session")
    after = published_revision()

    with pytest.raises(ReleaseConflict, match="'research' is a mode that sessions use"):
        publish_revision(number=before, user=admin_user)
    assert AgentMode.objects.filter(key="research").exists()
    assert published_revision() == after


@pytest.mark.postgres(reason="another connection's uncommitted move, and PostgreSQL's row locks")
@pytest.mark.usefixtures("modes_restored_after_flush")
class TestAModeASessionMovesIntoMeanwhile:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_is_kept_and_its_deletion_refused_as_in_use(self, new_mode, alice, second_connection):
        scratch = new_mode("scratch")
        session = create_session(release=published_release(), owner=alice, org=None)
        other = second_connection()
        other.execute("SET CONSTRAINTS ALL IMMEDIATE")  # as set_session_mode's transaction, not committed yet
        other.execute("UPDATE sessions_app_agentsession SET mode_id = %s WHERE id = %s", [scratch.pk, session.pk])
        committer = CommitOnceWaitedOn(other)
        with pytest.raises(ModeInUse, match="'scratch' is a mode that sessions use"):
            delete_modes(modes=[scratch])
        committer.join()
        assert committer.waited  # the race was run: the deletion met the move uncommitted
        assert AgentMode.objects.filter(key="scratch").exists()
        assert AgentSession.objects.get(pk=session.pk).mode_id == scratch.pk
