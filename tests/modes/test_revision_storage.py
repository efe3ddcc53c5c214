"""
Revisions store what changed: an edit of one mode adds one entry, for that mode, however large the catalog;
a deletion adds a removal; every earlier revision still reads back whole and as it was.
"""

import pytest

from modes.models import AgentMode, CatalogRevision, CatalogRevisionEntry
from modes.services import catalog_change

pytestmark = pytest.mark.django_db


def add_custom_modes(count):
    with catalog_change(by=None):
        for number in range(count):
            AgentMode.objects.create(
                key=f"custom_{number:03d}", display_name=f"Custom {number}", description=f"Custom mode {number}.",
                when_to_use=f"Use this mode for task {number}.", position=10 + number,
            )


def edit_one_field(key, when_to_use):
    mode = AgentMode.objects.get(key=key)
    mode.when_to_use = when_to_use
    with catalog_change(by=None) as recording:
        mode.save()
    return recording.revision.number, mode.pk


def entries_of(number):
    return list(CatalogRevisionEntry.objects.filter(revision_id=number).values_list("kind", "identity", "content__when_to_use"))


@pytest.mark.parametrize("custom_modes", [3, 60])
def test_an_edit_of_one_field_stores_one_entry_for_that_mode_whatever_the_catalog_size(custom_modes):
    add_custom_modes(custom_modes)
    assert AgentMode.objects.count() == 3 + custom_modes

    number, pk = edit_one_field("custom_001", "Use this mode for the edited task.")

    assert entries_of(number) == [("mode", pk, "Use this mode for the edited task.")]
    catalog = CatalogRevision.objects.get(number=number).catalog
    assert len(catalog["modes"]) == 3 + custom_modes
    assert catalog["modes"] == CatalogRevision.objects.get(number=number - 1).catalog["modes"][:4] + [
        {**catalog["modes"][4], "when_to_use": "Use this mode for the edited task."}
    ] + catalog["modes"][5:]


def test_a_deletion_stores_a_removal_and_earlier_revisions_still_have_the_mode():
    add_custom_modes(2)
    gone = AgentMode.objects.get(key="custom_000")
    gone_id = gone.pk
    with catalog_change(by=None) as recording:
        gone.delete()

    assert list(CatalogRevisionEntry.objects.filter(revision_id=recording.revision.number).values_list("identity", "content")) == [
        (gone_id, None)
    ]
    assert "custom_000" not in [mode["key"] for mode in CatalogRevision.objects.get(number=recording.revision.number).catalog["modes"]]
    assert "custom_000" in [mode["key"] for mode in CatalogRevision.objects.get(number=recording.revision.number - 1).catalog["modes"]]
