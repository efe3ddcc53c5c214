"""The seed migration writes the three V1 modes of AGN-014 §8 exactly."""

import pytest

from modes.models import AgentMode

pytestmark = pytest.mark.django_db


def test_the_three_v1_modes_exist_in_section_8_order():
    assert list(AgentMode.objects.values_list("id", "key", "display_name", "is_default")) == [
        ("3F8E4F377F7A4C189C7F6A8B9F945C11", "general", "General", True),
        ("A9E1F9C15A0C4F8D9AF51F3E8B2A6D22", "ddr_authoring", "DDR Authoring", False),
        ("0FB81E6A8337444BA00A0CE28E3A1F78", "workflow_authoring", "Workflow Authoring", False),
    ]
