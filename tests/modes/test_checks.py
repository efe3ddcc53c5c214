"""
System checks modes.E001–E010: one check id per rule of the catalog (AGN-014 §7 and the mode graph), judged on the
published revision read from the real database; modes.W004 while the rows differ from the newest revision.
"""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError, SystemCheckError
from django.db.models import JSONField, Value

from modes.catalog import published_catalog
from modes.checks import catalog_errors, check_mode_catalog
from modes.models import AgentMode, CatalogRevision

from ..conftest import valid_mode

pytestmark = pytest.mark.django_db

DDR = "ddr_authoring"


def check_database_errors():
    """The text of the SystemCheckError that `check --database default` raises."""
    with pytest.raises(SystemCheckError) as caught:
        call_command("check", "--database", "default")
    return str(caught.value)


def check_database_warnings():
    """What `check --database default` prints when it passes: its warnings (on stderr)."""
    out, err = StringIO(), StringIO()
    call_command("check", "--database", "default", stdout=out, stderr=err)  # no SystemCheckError
    return out.getvalue() + err.getvalue()


def assert_database_check(check_id, message):
    """`check --database default` fails with the check id and its message."""
    text = check_database_errors()
    assert check_id in text
    assert message in text


@pytest.fixture
def break_ddr(recorded_past_the_rules):
    """break_ddr(check_id, **fields): ddr_authoring given fields past the services, and published past the rules."""

    def broken(check_id, **fields):
        assert AgentMode.objects.filter(key=DDR).update(**fields) == 1
        recorded_past_the_rules(check_id)

    return broken


@pytest.fixture
def publish_without_default(recorded_past_the_rules):
    """Clears every default past the services, and publishes that past the rules (unless under review)."""

    def publish():
        AgentMode.objects.update(is_default=False)
        recorded_past_the_rules("modes.E005")

    return publish


def mode(**overrides):
    """A valid unsaved mode with, unless given, the id every such mode here shares."""
    return valid_mode(**{"id": "11111111111111111111111111111111", **overrides})


def check_ids(errors):
    return [error.id for error in errors]


# --- the seed catalog passes -------------------------------------------------------------------------


def test_check_with_database_passes_on_the_seed_catalog():
    call_command("check", "--database", "default")  # raises SystemCheckError on any error
    assert catalog_errors(list(AgentMode.objects.all())) == []


def test_check_mode_catalog_reads_the_catalog_only_when_asked_for_the_default_database(
    unconstrained_catalog, publish_without_default
):
    publish_without_default()
    assert check_mode_catalog(databases=None) == []
    assert check_mode_catalog(databases=[]) == []
    # The seed modes list tools nobody has declared: a warning for each mode, after the error.
    assert check_ids(check_mode_catalog(databases=["default"])) == ["modes.E005", "modes.W001", "modes.W001", "modes.W001"]


def test_plain_check_without_database_does_not_read_the_catalog(unconstrained_catalog, publish_without_default):
    publish_without_default()
    call_command("check")  # would raise SystemCheckError if it read the broken catalog
    assert "modes.E005" in check_database_errors()


# --- rows that no revision holds: a warning, since agents are not served them ---------------------------


def test_a_change_past_the_services_is_warned_about_until_record_revision_records_it():
    AgentMode.objects.filter(key=DDR).update(display_name="DDRs")

    warnings = [item for item in check_mode_catalog(databases=["default"]) if item.id == "modes.W004"]
    assert [(item.msg, item.hint) for item in warnings] == [
        (
            "The catalog's rows differ from its newest revision (mode ddr_authoring: display_name): a change made "
            "past the services (QuerySet.update() or raw SQL) that no revision holds, so agents are not served it.",
            "Run 'python manage.py record_revision' to record it, through the catalog's rules.",
        )
    ]
    assert "(modes.W004) The catalog's rows differ from its newest revision" in check_database_warnings()

    call_command("record_revision", stdout=StringIO())

    assert "modes.W004" not in check_ids(check_mode_catalog(databases=["default"]))
    assert "modes.W004" not in check_database_warnings()


def test_a_broken_change_past_the_services_is_a_warning_and_record_revision_refuses_to_record_it(
    unconstrained_catalog,
):
    AgentMode.objects.update(is_default=False)

    # Agents are served revision 1, which keeps every rule: no error, the rows are warned about.
    assert check_ids(check_mode_catalog(databases=["default"]))[0] == "modes.W004"
    assert "(modes.W004) The catalog's rows differ from its newest revision (mode general: is_default)" in (
        check_database_warnings()
    )
    with pytest.raises(CommandError, match=r"^This would break the catalog's rules: modes\.E005: "):
        call_command("record_revision", stdout=StringIO())

    assert CatalogRevision.objects.count() == 1
    assert published_catalog().default.key == "general"
    assert "modes.W004" in check_database_warnings()  # still unrecorded
    assert "modes.E005" not in check_ids(check_mode_catalog(databases=["default"]))


def test_a_broken_pending_revision_is_no_error_and_agents_keep_the_published_one(
    unconstrained_catalog, publish_without_default, settings
):
    settings.CATALOG_APPROVALS = 1
    publish_without_default()  # recorded as revision 2, which waits for review: agents keep revision 1
    assert published_catalog().revision == 1
    assert check_ids(check_mode_catalog(databases=["default"])) == ["modes.W001", "modes.W001", "modes.W001"]
    check_database_warnings()  # no SystemCheckError


# --- one id per invariant, from the database ---------------------------------------------------------


@pytest.mark.parametrize("bad_id", ["a9e1f9c15a0c4f8d9af51f3e8b2a6d22", "NOT-A-GUID", "A9E1F9C1"])
def test_e001_malformed_id_names_the_mode(unconstrained_catalog, recorded_past_the_rules, custom_mode, bad_id):
    # A custom mode's: a built-in mode's id cannot change at all (a new id deletes the mode of the old one, and the
    # deletion rules keep a built-in mode).
    assert AgentMode.objects.filter(key="research").update(id=bad_id) == 1
    recorded_past_the_rules("modes.E001")
    message = f"Mode 'research' has id '{bad_id}', which is not 32 upper-case hexadecimal characters."
    assert_database_check("modes.E001", message)


@pytest.mark.parametrize("bad_key", ["DDR_Authoring", "ddr-authoring", "ddr authoring"])
def test_e003_malformed_key_names_the_mode(unconstrained_catalog, break_ddr, bad_key):
    break_ddr("modes.E003", key=bad_key)
    assert_database_check("modes.E003", f"Mode key '{bad_key}' is not snake_case")


def test_e005_no_default_mode(unconstrained_catalog, publish_without_default):
    publish_without_default()
    assert_database_check("modes.E005", "No mode is the default mode.")


def test_e006_two_default_modes_names_both(unconstrained_catalog, break_ddr):
    break_ddr("modes.E006", is_default=True)
    assert_database_check("modes.E006", "Modes 'general', 'ddr_authoring' are all marked default; exactly one must be.")


@pytest.mark.parametrize("when_to_use", ["", "   ", "First line.\nSecond line.", "One.\rTwo."])
def test_e007_empty_or_multi_line_when_to_use_names_the_mode(unconstrained_catalog, break_ddr, when_to_use):
    break_ddr("modes.E007", when_to_use=when_to_use)
    assert_database_check("modes.E007", "Mode 'ddr_authoring' has no single-line when-to-use sentence.")


@pytest.mark.parametrize("status", ["retired", "", "ACTIVE"])
def test_e008_unknown_status_names_the_mode(unconstrained_catalog, break_ddr, status):
    break_ddr("modes.E008", status=status)
    message = f"Mode 'ddr_authoring' has status '{status}', which is not one of active, experimental, deprecated."
    assert_database_check("modes.E008", message)


@pytest.mark.parametrize(
    "field, value",
    [
        ("mode_instructions", "Follow SYS-001."),
        ("associated_tool_ids", {"agent_list_modes": True}),
        ("human_role_hints", ["Architect", 7]),
        ("strong_signals", ["DDR", ""]),
        ("weak_signals", ["spec", "  "]),
        ("example_utterances", ["Line one.\nLine two."]),
        ("rag_scope_hints", Value(None, output_field=JSONField())),  # JSON null
    ],
)
def test_e009_list_field_not_a_list_of_single_line_strings_names_mode_and_field(
    unconstrained_catalog, break_ddr, field, value
):
    break_ddr("modes.E009", **{field: value})
    message = f"Mode 'ddr_authoring' field '{field}' is not a list of non-empty, single-line strings."
    assert_database_check("modes.E009", message)


def test_check_reports_every_broken_invariant_at_once(unconstrained_catalog, break_ddr):
    AgentMode.objects.filter(key="general").update(is_default=False, status="gone")
    break_ddr("modes.E003", key="Bad", when_to_use="")
    text = check_database_errors()
    for check_id in ("modes.E003", "modes.E005", "modes.E007", "modes.E008"):
        assert check_id in text


# --- duplicates, which the database cannot store -----------------------------------------------------


def test_e002_duplicate_id_names_both_modes():
    errors = catalog_errors([mode(key="research", is_default=True), mode(key="review")])
    assert check_ids(errors) == ["modes.E002"]
    assert errors[0].msg == "Modes 'research', 'review' share the id '11111111111111111111111111111111'."


def test_e004_duplicate_key_names_the_key():
    errors = catalog_errors(
        [mode(is_default=True), mode(id="22222222222222222222222222222222"), mode(id="33333333333333333333333333333333")]
    )
    assert check_ids(errors) == ["modes.E004"]
    assert errors[0].msg == "Modes 'research', 'research', 'research' share the key 'research'."


def test_catalog_errors_on_valid_unsaved_modes_is_empty():
    assert catalog_errors([mode(is_default=True), mode(key="review", id="22222222222222222222222222222222")]) == []


def test_catalog_errors_flags_a_missing_id():
    errors = catalog_errors([mode(id="", is_default=True)])
    assert check_ids(errors) == ["modes.E001"]


@pytest.mark.parametrize("value", ["always", "", "USER"])
def test_e011_unknown_entry_confirmation_names_the_mode(unconstrained_catalog, break_ddr, value):
    break_ddr("modes.E011", entry_confirmation=value)
    message = f"Mode 'ddr_authoring' has entry confirmation '{value}', which is not one of inherit, user, none."
    assert_database_check("modes.E011", message)
