"""
Every migration can be undone: on PostgreSQL, every app migrated back to zero (no table of theirs left) and
forward again ends with the three seed modes as revision 1, published, no trigger, no table of the retired per-row
history, and a catalog that passes its checks.
The database is put back as it was for the tests that follow.
"""

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection

from modes.checks import catalog_is_migrated
from modes.rules import catalog_errors
from modes.models import AgentMode, CatalogHead, CatalogRevision

# Dependents before what they depend on.
APPS_IN_REVERSE_DEPENDENCY_ORDER = [
    "sessions_app",
    "accounts",
    "modes",
    "admin",
    "auth",
    "contenttypes",
    "sessions",
]
SEED = [
    ("3F8E4F377F7A4C189C7F6A8B9F945C11", "general", True),
    ("A9E1F9C15A0C4F8D9AF51F3E8B2A6D22", "ddr_authoring", False),
    ("0FB81E6A8337444BA00A0CE28E3A1F78", "workflow_authoring", False),
]


def app_tables():
    labels = {label.split(".")[-1] for label in APPS_IN_REVERSE_DEPENDENCY_ORDER}
    return {
        model._meta.db_table
        for config in apps.get_app_configs()
        if config.label in labels
        for model in config.get_models(include_auto_created=True)
    }


def applied(app_label):
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM django_migrations WHERE app = %s", [app_label])
        return cursor.fetchone()[0]


@pytest.mark.postgres(reason="migrating everything to zero is run on PostgreSQL")
@pytest.mark.usefixtures("modes_restored_after_flush")
class TestMigratingEverythingToZero:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_every_app_migrates_to_zero_and_forward_again_with_the_seed_back(self):
        tables = app_tables()
        assert tables <= set(connection.introspection.table_names())

        for app_label in APPS_IN_REVERSE_DEPENDENCY_ORDER:
            call_command("migrate", app_label, "zero", verbosity=0)

        left = tables & set(connection.introspection.table_names())
        assert left == set(), f"tables left after migrating to zero: {sorted(left)}"
        assert [applied(label) for label in APPS_IN_REVERSE_DEPENDENCY_ORDER] == [0] * len(APPS_IN_REVERSE_DEPENDENCY_ORDER)
        assert not catalog_is_migrated("default")

        call_command("migrate", verbosity=0)

        assert tables <= set(connection.introspection.table_names())
        assert list(AgentMode.objects.order_by("position").values_list("pk", "key", "is_default")) == SEED
        head = CatalogHead.objects.get(pk=1)
        assert (head.latest, head.published) == (1, 1)
        assert head.published_at is not None and head.published_at == CatalogRevision.objects.get(number=1).published_at
        assert CatalogRevision.objects.get(number=1).summary == (
            "mode general created; mode ddr_authoring created; mode workflow_authoring created"
        )
        assert catalog_is_migrated("default")
        assert catalog_errors(list(AgentMode.objects.all())) == []
        call_command("check", "--database", "default")  # the seed's unresolved tool ids are warnings only
        assert database_triggers() == []
        assert [name for name in connection.introspection.table_names() if name.startswith("modes_historical")] == []


def database_triggers() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        return [name for (name,) in cursor.fetchall()]
