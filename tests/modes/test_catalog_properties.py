"""
A property of the whole catalog (issue 39): whatever admins do, in whatever order (edits, additions, deletions,
Make default, imports, approvals, publications, rollbacks, and record_revision after a raw UPDATE), the catalog
agents are served keeps every rule. Hypothesis drives random sequences through the services; a refusal is an
allowed outcome of any step, a published catalog that breaks a rule is not.
"""

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from aptix_site.service_errors import ServiceError
from modes.catalog import published_catalog
from modes.models import AgentMode, CatalogHead
from modes.portable import PortableFileError, read_document
from modes.releases import approve_revision, publish_revision
from modes.rules import catalog_errors
from modes.services import catalog_change, delete_modes, import_modes, record_unrecorded_changes, set_default_mode

from ..conftest import valid_mode

KEYS = ["general", "ddr_authoring", "workflow_authoring", "notes"]
TARGETS = st.lists(st.sampled_from(KEYS), max_size=2, unique=True)
# One field at a time, of those the rules and the mode graph read (a bad value included: refused, nothing changes).
CHANGES = st.one_of(
    st.fixed_dictionaries({"llm_can_enter": st.booleans()}),
    st.fixed_dictionaries({"switch_targets": TARGETS}),
    st.fixed_dictionaries({"status": st.sampled_from(AgentMode.Status.values)}),
    st.just({"when_to_use": "Two\nlines."}),
)
REFUSED = (ServiceError, ValidationError, IntegrityError, PortableFileError)


class CatalogUnderAdmins(RuleBasedStateMachine):
    """Two admins, one of whom must approve what the other changes (CATALOG_APPROVALS = 1)."""

    def __init__(self):
        super().__init__()
        self.savepoint = transaction.savepoint()  # each sequence starts from the migrated catalog
        User = get_user_model()
        self.author = User.objects.create_user("author", is_staff=True, is_superuser=True)  # no password to hash
        self.reviewer = User.objects.create_user("reviewer", is_staff=True, is_superuser=True)

    def teardown(self):
        transaction.savepoint_rollback(self.savepoint)

    def attempt(self, step):
        try:
            with transaction.atomic():  # a refused step leaves nothing behind, as each way of serving does
                step()
        except REFUSED:
            pass

    def mode(self, key):
        return AgentMode.objects.filter(key=key).first()

    @rule(key=st.sampled_from(KEYS), changes=CHANGES)
    def edit_or_add(self, key, changes):
        mode = self.mode(key) or valid_mode(key)
        for field, value in changes.items():
            setattr(mode, field, value)

        def save():
            with catalog_change(by=self.author):
                mode.full_clean()  # as the admin's form does
                mode.save()

        self.attempt(save)

    @rule(key=st.sampled_from(KEYS))
    def delete(self, key):
        if mode := self.mode(key):
            self.attempt(lambda: delete_modes(modes=[mode], deleted_by=self.author))

    @rule(key=st.sampled_from(KEYS))
    def make_default(self, key):
        if mode := self.mode(key):
            self.attempt(lambda: set_default_mode(mode=mode, changed_by=self.author))

    @rule(key=st.sampled_from(KEYS), switch_targets=TARGETS, can_enter=st.booleans())
    def import_one_mode(self, key, switch_targets, can_enter):
        entry = {"key": key, "display_name": key.title(), "when_to_use": f"Use this mode for {key}.",
                 "switch_targets": switch_targets, "llm_can_enter": can_enter}
        mode_file = read_document(json.dumps({"format": "aptix-modes", "version": 1, "modes": [entry]}))
        self.attempt(lambda: import_modes(mode_file=mode_file, update=True, dry_run=False, imported_by=self.author))

    @rule(key=st.sampled_from(KEYS), changes=CHANGES)
    def raw_update_then_record_revision(self, key, changes):
        def write_past_the_services_then_record():
            AgentMode.objects.filter(key=key).update(**changes)
            record_unrecorded_changes()

        self.attempt(write_past_the_services_then_record)

    @rule()
    def approve_and_publish_the_newest(self):
        number = CatalogHead.objects.get().latest
        self.attempt(lambda: approve_revision(number=number, user=self.reviewer))
        self.attempt(lambda: publish_revision(number=number, user=self.reviewer))

    @rule(back=st.integers(min_value=1, max_value=6))
    def roll_back(self, back):
        number = max(1, CatalogHead.objects.get().latest - back)
        self.attempt(lambda: publish_revision(number=number, user=self.reviewer))

    @invariant()
    def the_served_catalog_keeps_every_rule(self):
        catalog = published_catalog()
        assert [f"{error.id}: {error.msg}" for error in catalog_errors(list(catalog.modes))] == []


@pytest.mark.django_db
def test_no_sequence_of_admin_actions_serves_a_catalog_that_breaks_a_rule(settings):
    settings.CATALOG_APPROVALS = 1
    run_state_machine_as_test(
        CatalogUnderAdmins,
        settings=hypothesis_settings(
            max_examples=60, stateful_step_count=10, deadline=None, suppress_health_check=list(HealthCheck)
        ),
    )
