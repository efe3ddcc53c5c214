"""The rules that keep a mode: they hold for the services and for a deletion made in a shell alike."""

import pytest
from django.db import transaction

from modes.models import AgentMode
from modes.services import ModeDeletionRefused, ModeInUse, delete_modes
from modes.catalog import published_catalog

pytestmark = pytest.mark.django_db

DEFAULT_REFUSAL = "'general' is the default mode; make another mode the default first."
BUILTIN_REFUSAL = "'ddr_authoring' is a built-in mode that AGN-014 requires; set its status to deprecated instead."


def test_a_shell_delete_of_the_default_mode_is_refused_and_deletes_nothing():
    # In a transaction of its own, as a refused write needs inside another (here the test's).
    with pytest.raises(ModeDeletionRefused, match=DEFAULT_REFUSAL), transaction.atomic():
        AgentMode.objects.get(key="general").delete()
    assert AgentMode.objects.filter(key="general").exists()


def test_a_shell_queryset_delete_with_a_builtin_mode_in_it_deletes_nothing(custom_mode):
    with pytest.raises(ModeDeletionRefused, match=BUILTIN_REFUSAL), transaction.atomic():
        AgentMode.objects.filter(key__in=["research", "ddr_authoring"]).delete()
    assert AgentMode.objects.count() == 4


def test_a_shell_delete_of_a_custom_mode_that_is_not_the_default_works(custom_mode):
    AgentMode.objects.filter(key="research").delete()
    assert not AgentMode.objects.filter(key="research").exists()


def test_the_service_names_every_mode_that_must_stay_and_deletes_none(custom_mode):
    with pytest.raises(ModeDeletionRefused) as refused:
        delete_modes(modes=AgentMode.objects.filter(key__in=["general", "ddr_authoring", "research"]))
    assert str(refused.value) == f"{DEFAULT_REFUSAL} {BUILTIN_REFUSAL}"
    assert AgentMode.objects.count() == 4


def test_the_service_refuses_a_mode_that_sessions_use(alice, custom_mode):
    from sessions_app.services import create_session

    create_session(catalog=published_catalog(), owner=alice, org=None, mode_key="research", title="Research session")
    with pytest.raises(ModeInUse, match="'research' is a mode that sessions use"):
        delete_modes(modes=[custom_mode])
    assert AgentMode.objects.filter(key="research").exists()


def test_the_service_deletes_a_custom_mode_in_a_revision_of_its_own(admin_user, custom_mode):
    from modes.models import CatalogRevision

    before = CatalogRevision.objects.count()
    delete_modes(modes=[custom_mode], deleted_by=admin_user)
    latest = CatalogRevision.objects.first()
    assert not AgentMode.objects.filter(key="research").exists()
    assert (CatalogRevision.objects.count(), latest.created_by) == (before + 1, admin_user)


def published_revision() -> int:
    from modes.models import CatalogVersion

    return CatalogVersion.objects.get(pk=1).published


def test_a_rollback_deletes_the_default_it_replaces_making_the_revisions_own_the_default(admin_user):
    from modes.releases import publish_revision
    from modes.services import set_default_mode

    before = published_revision()
    research = AgentMode.objects.create(key="research", display_name="Research", when_to_use="Use this for research.")
    set_default_mode(mode=research)

    publish_revision(number=before, user=admin_user)

    assert not AgentMode.objects.filter(key="research").exists()
    assert list(AgentMode.objects.filter(is_default=True).values_list("key", flat=True)) == ["general"]


def test_a_rollback_that_would_delete_a_mode_sessions_use_is_refused_and_changes_nothing(alice, admin_user):
    from modes.releases import ReleaseConflict, publish_revision
    from sessions_app.services import create_session

    before = published_revision()
    AgentMode.objects.create(key="research", display_name="Research", when_to_use="Use this for research.")
    create_session(catalog=published_catalog(), owner=alice, org=None, mode_key="research", title="Research session")
    after = published_revision()

    with pytest.raises(ReleaseConflict, match="'research' is a mode that sessions use"):
        publish_revision(number=before, user=admin_user)
    assert AgentMode.objects.filter(key="research").exists()
    assert published_revision() == after
