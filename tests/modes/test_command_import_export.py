"""manage.py export_modes and import_modes: the portable file, validated whole, applied all or nothing."""

import json
import os
import re
import time
from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.core.management import CommandError, call_command

from modes.checks import catalog_errors
from modes.models import AgentMode

from ..conftest import through_the_services
from ..expected import GENERAL_ID, LIST_FIELDS

pytestmark = pytest.mark.django_db

PORTABLE_FIELDS = [
    "id",
    "key",
    "display_name",
    "description",
    "when_to_use",
    "status",
    "version",
    "entry_confirmation",
    "prompt",
    "custom_instructions",
    "is_default",
    "llm_can_enter",
    "position",
    *LIST_FIELDS,
    "switch_targets",
]

SCOUT = {
    "key": "scout",
    "display_name": "Scout",
    "description": "Looks things up.",
    "when_to_use": "Use this mode when the user wants something looked up.",
    "associated_tool_ids": ["agent_list_modes"],
}


def catalog():
    """Every field of every row, timestamps included."""
    return list(AgentMode.objects.order_by("pk").values())


def export(*args):
    out, err = StringIO(), StringIO()
    call_command("export_modes", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def import_modes(path, *args):
    out = StringIO()
    call_command("import_modes", str(path), *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def import_error(path, *args):
    """The CommandError message of a refused import; asserts that nothing changed."""
    before = catalog()
    with pytest.raises(CommandError) as caught:
        import_modes(path, *args)
    assert catalog() == before
    return str(caught.value)


@pytest.fixture
def write_file(tmp_path):
    def write(content, name="modes.yaml"):
        path = tmp_path / name
        if not isinstance(content, str):
            content = yaml.safe_dump(content, sort_keys=False, allow_unicode=True)
        path.write_text(content, encoding="utf-8")
        return path

    return write


def document(*modes):
    return {"format": "aptix-modes", "version": 1, "modes": list(modes)}


@pytest.fixture
def awkward_custom_mode(db):
    """A custom mode whose text needs quoting in YAML, created through the services (one revision)."""
    return through_the_services(lambda: AgentMode.objects.create(
        key="awkward",
        display_name="yes",
        description="key: value # not a comment\n- not a list",
        when_to_use="Use this mode when the user\u2019s text looks like YAML: null, true, 0x10, - dash.",
        version="1.0",
        status="experimental",
        mode_instructions=["on", "null", "'quoted'", '"double"', "@at", "100", "delete \x7f, C1 control \x9b"],
        strong_signals=["\u00e9t\u00e9", "\u2603", "\U0001f600"],
        # Markdown prompts as coding agents write them: blank lines, indentation, fences, spaces at line ends.
        prompt="# Role \U0001f3d7\ufe0f\n\n  indented: yes\n- not a list\n\n```yaml\nkey: value\n```\n",
        custom_instructions="Trailing spaces   \n\tTabbed\n\n\n",
    ))


# --- export --------------------------------------------------------------------------------------------


def test_export_writes_yaml_with_every_portable_field_of_every_mode(custom_mode):
    out, err = export()
    doc = yaml.safe_load(out)
    assert (doc["format"], doc["version"]) == ("aptix-modes", 1)
    assert [entry["key"] for entry in doc["modes"]] == ["general", "ddr_authoring", "workflow_authoring", "research"]
    for entry in doc["modes"]:
        assert list(entry) == PORTABLE_FIELDS
        mode = AgentMode.objects.get(key=entry["key"])
        assert entry == {name: getattr(mode, name) for name in PORTABLE_FIELDS}
    assert err == ""


def test_export_leaves_out_source_and_timestamps():
    entry = yaml.safe_load(export()[0])["modes"][0]
    assert not {"source", "created_at", "updated_at"} & set(entry)


def test_export_custom_only(custom_mode):
    doc = yaml.safe_load(export("--custom-only")[0])
    assert [entry["key"] for entry in doc["modes"]] == ["research"]


def test_export_json_to_a_file(tmp_path, custom_mode):
    path = tmp_path / "modes.json"
    out, err = export("--format", "json", "--output", str(path))
    assert out == ""
    assert err == f"Exported 4 modes and 0 declared tools to {path}.\n"
    assert json.loads(path.read_text(encoding="utf-8")) == yaml.safe_load(export()[0])


def test_export_to_an_unwritable_path_is_a_command_error(tmp_path):
    with pytest.raises(CommandError, match=r"^Cannot write .*missing/modes.yaml: No such file or directory\.$"):
        export("--output", str(tmp_path / "missing" / "modes.yaml"))


@pytest.mark.parametrize("existing", ["file", "dangling link"])
def test_export_never_overwrites_a_file_without_force(tmp_path, custom_mode, existing):
    path = tmp_path / "modes.yaml"
    if existing == "file":
        path.write_text("an earlier export, or a file by hand", encoding="utf-8")
    else:
        path.symlink_to(tmp_path / "nowhere.yaml")
    with pytest.raises(CommandError, match=rf"^{re.escape(str(path))} exists; pass --force to overwrite it\.$"):
        export("--output", str(path))
    assert not (tmp_path / "nowhere.yaml").exists()
    if existing == "file":
        assert path.read_text(encoding="utf-8") == "an earlier export, or a file by hand"
    export("--output", str(path), "--force")
    assert yaml.safe_load(path.read_text(encoding="utf-8")) == yaml.safe_load(export()[0])


@pytest.mark.parametrize("file_format", ["yaml", "json"])
def test_export_then_import_update_leaves_the_catalog_identical(tmp_path, custom_mode, awkward_custom_mode, file_format):
    path = tmp_path / f"modes.{file_format}"
    export("--format", file_format, "--output", str(path))
    before = catalog()

    output = import_modes(path, "--update")

    assert catalog() == before
    assert output == (
        "mode general: unchanged\nmode ddr_authoring: unchanged\nmode workflow_authoring: unchanged\n"
        "mode research: unchanged\nmode awkward: unchanged\n"
        "Created 0, updated 0, left 5 unchanged. Catalog revision: 3.\n"  # each fixture's mode was one
    )


# --- import: creating and updating ---------------------------------------------------------------------


def test_import_creates_a_custom_mode(write_file):
    output = import_modes(write_file(document(SCOUT)))
    assert output == "mode scout: created\nCreated 1, updated 0, left 0 unchanged. Catalog revision: 2.\n"
    mode = AgentMode.objects.get(key="scout")
    assert (mode.source, mode.is_default, mode.position, mode.associated_tool_ids) == (
        "custom",
        False,
        4,
        ["agent_list_modes"],
    )
    assert len(mode.id) == 32


def test_import_reads_json(write_file):
    import_modes(write_file(json.dumps(document(SCOUT)), name="modes.json"))
    assert AgentMode.objects.filter(key="scout").exists()


def test_import_reads_json_that_is_not_yaml(write_file):
    # Tab indents and escaped surrogate pairs (json.dumps writes an emoji as two) are JSON but not YAML.
    scout = {**SCOUT, "display_name": "Scout \U0001f600"}
    import_modes(write_file(json.dumps(document(scout), indent="\t"), name="modes.json"))
    assert AgentMode.objects.get(key="scout").display_name == "Scout \U0001f600"


def test_import_reads_a_file_that_starts_with_a_byte_order_mark(write_file):
    import_modes(write_file("\ufeff" + json.dumps(document(SCOUT)), name="modes.json"))
    assert AgentMode.objects.filter(key="scout").exists()


@pytest.mark.parametrize(
    "content",
    [
        'format: aptix-modes\nversion: 1\nmodes:\n- key: scout\n  display_name: Scout\n  key: scout_two\n',
        '{"format": "aptix-modes", "version": 1, "modes": [{"key": "scout", "display_name": "S", "key": "scout_two"}]}',
    ],
    ids=["yaml", "json"],
)
def test_a_field_given_twice_in_one_mode_is_a_command_error(write_file, content):
    message = import_error(write_file(content))
    assert message.endswith("The field 'key' is given twice in one mapping; keep one of them.")


def test_import_keeps_a_given_id_for_a_new_mode(write_file):
    import_modes(write_file(document({**SCOUT, "id": "ABCDEF0123456789ABCDEF0123456789"})))
    assert AgentMode.objects.get(key="scout").pk == "ABCDEF0123456789ABCDEF0123456789"


def test_import_of_an_existing_key_without_update_is_refused(write_file, custom_mode):
    message = import_error(write_file(document({"key": "research", "display_name": "Renamed"})))
    assert (
        "modes[0] (key 'research'): key: mode 'research' already exists; import with update on "
        '(--update, "update": true) to update it.'
    ) in message


def test_import_update_changes_only_the_modes_that_differ(write_file, custom_mode):
    before = {row["key"]: row for row in catalog()}
    output = import_modes(
        write_file(document({"key": "research", "display_name": "Deep Research"}, {"key": "general"})), "--update"
    )
    assert output == (
        "mode research: updated (display_name)\nmode general: unchanged\n"
        "Created 0, updated 1, left 1 unchanged. Catalog revision: 3.\n"
    )
    after = {row["key"]: row for row in catalog()}
    assert after["research"]["display_name"] == "Deep Research"
    assert after["research"]["updated_at"] > before["research"]["updated_at"]
    assert after["research"]["when_to_use"] == before["research"]["when_to_use"]
    for key in ("general", "ddr_authoring", "workflow_authoring"):
        assert after[key] == before[key]


def test_import_update_of_a_builtin_mode_keeps_it_builtin(write_file):
    import_modes(write_file(document({"key": "ddr_authoring", "status": "deprecated"})), "--update")
    mode = AgentMode.objects.get(key="ddr_authoring")
    assert (mode.status, mode.source, mode.pk) == ("deprecated", "builtin", "A9E1F9C15A0C4F8D9AF51F3E8B2A6D22")


def test_import_never_removes_a_builtin_mode(write_file):
    builtins = catalog()
    import_modes(write_file(document(SCOUT)))
    assert [row for row in catalog() if row["source"] == "builtin"] == builtins
    assert AgentMode.objects.count() == 4


def test_import_never_changes_a_builtin_id(write_file):
    message = import_error(write_file(document({"key": "general", "id": "00000000000000000000000000000000"})), "--update")
    assert message.splitlines()[1:] == [
        f"  modes[0] (key 'general'): id: the built-in mode 'general' has id {GENERAL_ID}; ids never change."
    ]


def test_import_never_changes_a_custom_id(write_file, custom_mode):
    message = import_error(write_file(document({"key": "research", "id": "00000000000000000000000000000000"})), "--update")
    assert f"modes[0] (key 'research'): id: the mode 'research' has id {custom_mode.pk}; ids never change." in message


def test_import_cannot_give_a_new_mode_the_id_of_another(write_file):
    message = import_error(write_file(document({**SCOUT, "id": GENERAL_ID})))
    assert f"modes[0] (key 'scout'): id: {GENERAL_ID} belongs to mode 'general'; import cannot rename a mode." in message


def test_import_refuses_a_key_twice_in_one_file(write_file):
    message = import_error(write_file(document(SCOUT, {**SCOUT, "display_name": "Scout 2"})))
    assert "modes[1] (key 'scout'): key: 'scout' appears again, first at modes[0]." in message


# --- import: the default -------------------------------------------------------------------------------


def test_import_with_one_default_makes_it_the_only_default(write_file):
    output = import_modes(write_file(document({**SCOUT, "is_default": True})))
    assert output == "mode scout: created\ndefault: scout\nCreated 1, updated 0, left 0 unchanged. Catalog revision: 2.\n"
    assert list(AgentMode.objects.filter(is_default=True).values_list("key", flat=True)) == ["scout"]
    assert catalog_errors(list(AgentMode.objects.all())) == []


def test_import_can_move_the_default_to_an_existing_mode(write_file):
    import_modes(write_file(document({"key": "ddr_authoring", "is_default": True})), "--update")
    assert list(AgentMode.objects.filter(is_default=True).values_list("key", flat=True)) == ["ddr_authoring"]


def test_import_can_move_the_default_while_it_updates_the_old_default(write_file):
    output = import_modes(
        write_file(document({"key": "general", "display_name": "Everyday"}, {**SCOUT, "is_default": True})), "--update"
    )
    assert output.startswith("mode general: updated (display_name)\nmode scout: created\ndefault: scout\n")
    assert list(AgentMode.objects.filter(is_default=True).values_list("key", flat=True)) == ["scout"]
    assert AgentMode.objects.get(key="general").display_name == "Everyday"
    assert catalog_errors(list(AgentMode.objects.all())) == []


def test_import_with_two_defaults_is_refused(write_file):
    message = import_error(
        write_file(document({**SCOUT, "is_default": True}, {**SCOUT, "key": "scout_two", "is_default": True}))
    )
    assert "modes.E006: Modes 'scout', 'scout_two' are all marked default; exactly one must be." in message


def test_import_cannot_leave_the_catalog_without_a_default(write_file):
    message = import_error(write_file(document({"key": "general", "is_default": False})), "--update")
    assert "modes.E005: No mode is the default mode." in message


# --- import: all or nothing, problems reported by position, key and field -----------------------------


def test_a_file_with_one_good_and_one_bad_mode_changes_nothing(write_file):
    path = write_file(document(SCOUT, {**SCOUT, "key": "Bad Key"}))
    message = import_error(path)
    assert message.startswith(f"{path} was not imported; nothing changed:\n")
    assert (
        "modes[1] (key 'Bad Key'): key: A mode key is snake_case: lower-case letters, digits and underscores only "
        "(for example ddr_authoring)." in message
    )
    assert not AgentMode.objects.filter(key="scout").exists()


def test_every_problem_is_reported_with_position_key_and_field(write_file):
    message = import_error(
        write_file(
            document(
                {**SCOUT, "when_to_use": "Line one.\nLine two."},
                {**SCOUT, "key": "scout_two", "status": "retired", "associated_tool_ids": ["no spaces allowed"]},
                {"display_name": "No key"},
            )
        )
    )
    lines = message.splitlines()[1:]
    assert (
        "  modes[0] (key 'scout'): when_to_use: This must be a single line: it is rendered inline in the system prompt."
        in lines
    )
    assert "  modes[1] (key 'scout_two'): status: Status 'retired' is not one of active, experimental or deprecated." in lines
    assert (
        "  modes[1] (key 'scout_two'): associated_tool_ids: These are not valid tool names (letters, digits, '_' "
        "and '-', at most 64 characters): 'no spaces allowed'." in lines
    )
    assert "  modes[2]: key: every mode needs a key." in lines


def test_import_refuses_a_mode_without_when_to_use(write_file):
    message = import_error(write_file(document({"key": "scout", "display_name": "Scout"})))
    assert "modes[0] (key 'scout'): when_to_use: This field cannot be blank." in message


def test_import_refuses_a_blank_when_to_use(write_file):
    # A when-to-use of spaces fails the start-up check (modes.E007), so it must not get in.
    path = write_file(document({**SCOUT, "when_to_use": "   "}))
    assert import_error(path) == (
        f"{path} was not imported; nothing changed:\n  modes[0] (key 'scout'): when_to_use: This cannot be only spaces."
    )
    assert catalog_errors(list(AgentMode.objects.all())) == []


def test_dry_run_reports_and_changes_nothing(write_file, custom_mode):
    before = catalog()
    output = import_modes(
        write_file(document({**SCOUT, "is_default": True}, {"key": "research", "display_name": "Renamed"})),
        "--dry-run",
        "--update",
    )
    assert output == (
        "mode scout: would be created\nmode research: would be updated (display_name)\ndefault: scout\n"
        "Dry run, nothing changed: would have created 1, updated 1, left 0 unchanged.\n"
    )
    assert catalog() == before


def test_an_unknown_entry_confirmation_is_refused_naming_the_valid_ones(write_file):
    message = import_error(write_file(document({**SCOUT, "entry_confirmation": "always"})))
    assert "modes[0] (key 'scout'): entry_confirmation: Entry confirmation 'always' is not one of inherit, user or none." in message


def test_dry_run_still_reports_problems(write_file):
    message = import_error(write_file(document({**SCOUT, "status": "retired"})), "--dry-run")
    assert "modes[0] (key 'scout'): status: Status 'retired' is not one of active, experimental or deprecated." in message


# --- import: files that cannot be read -----------------------------------------------------------------


def test_missing_file_is_a_command_error(tmp_path):
    path = tmp_path / "nowhere.yaml"
    assert import_error(path) == f"{path}: cannot be read (No such file or directory)."


def test_a_fifo_or_a_file_larger_than_an_import_takes_is_refused_before_it_is_read(tmp_path, settings):
    # /dev/zero ran out of memory, and a FIFO waited for ever.
    fifo = tmp_path / "modes.yaml"
    os.mkfifo(fifo)
    assert import_error(fifo) == f"{fifo}: not a regular file."
    assert import_error(Path("/dev/zero")) == "/dev/zero: not a regular file."
    settings.API_MAX_IMPORT_BYTES = 10
    large = tmp_path / "large.yaml"
    large.write_text("modes: []\n" * 2)
    assert import_error(large) == f"{large}: larger than the 10 bytes an import takes."
    with pytest.raises(CommandError, match=f"^{re.escape(str(large))}: larger than the 10 bytes"):
        call_command("import_routing_cases", str(large), "--format", "csv")


def test_malformed_yaml_is_a_command_error(write_file):
    message = import_error(write_file("modes: [\n  {key: scout\n"))
    assert "The file is not valid YAML or JSON:" in message


def test_malformed_json_is_a_command_error(write_file):
    message = import_error(write_file('{"modes": [{"key": "scout",}', name="modes.json"))
    assert "The file is not valid YAML or JSON:" in message


@pytest.mark.parametrize("content", ["- key: scout\n", "just some text\n", "", "modes: scout\n", "{}\n"])
def test_a_document_that_is_not_a_mapping_with_a_modes_list_is_a_command_error(write_file, content):
    assert "The file must be a mapping with a 'modes' list." in import_error(write_file(content))


def test_unknown_fields_are_a_command_error(write_file):
    content = document({**SCOUT, "colour": "blue", "source": "builtin"})
    content["extra"] = 1
    message = import_error(write_file(content))
    assert "Unknown top-level fields: extra." in message
    assert "modes[0] (key 'scout'): colour: unknown field." in message
    assert "modes[0] (key 'scout'): source: unknown field." in message


def test_an_unknown_field_close_to_a_real_one_is_named(write_file):
    message = import_error(write_file(document({**SCOUT, "when_to_us": "Use it."})))
    assert "modes[0] (key 'scout'): when_to_us: unknown field; did you mean when_to_use?" in message


def test_every_problem_of_a_file_is_reported_in_one_run(write_file):
    content = document(
        {**SCOUT, "key": "Bad Key", "colour": "blue"},
        {**SCOUT, "key": "second", "position": "3", "when_to_use": "Two\nlines."},
        {**SCOUT, "key": "third", "status": "retired", "display_name": 42},
        "not a mapping",
    )
    content["extra"] = 1
    message = import_error(write_file(content))
    assert message.splitlines()[1:] == [
        "  Unknown top-level fields: extra.",
        "  modes[0] (key 'Bad Key'): colour: unknown field.",
        "  modes[0] (key 'Bad Key'): key: A mode key is snake_case: lower-case letters, digits and underscores only "
        "(for example ddr_authoring).",
        "  modes[1] (key 'second'): position: must be a whole number, 0 or more.",
        "  modes[1] (key 'second'): when_to_use: This must be a single line: it is rendered inline in the system "
        "prompt.",
        "  modes[2] (key 'third'): display_name: must be text.",
        "  modes[2] (key 'third'): status: Status 'retired' is not one of active, experimental or deprecated.",
        "  modes[3]: each mode must be a mapping of field names to values.",
    ]


def test_a_key_of_the_wrong_type_is_reported_once(write_file):
    message = import_error(write_file(document({**SCOUT, "key": 7})))
    assert message.splitlines()[1:] == ["  modes[0]: key: must be text."]


def test_another_format_is_a_command_error(write_file):
    message = import_error(write_file({"format": "other", "version": 1, "modes": [SCOUT]}))
    assert "This is not an aptix-modes version 1 file." in message


@pytest.mark.parametrize(
    "field, value, problem",
    [
        ("is_default", "yes", "is_default: must be true or false."),
        ("is_default", 1, "is_default: must be true or false."),
        ("position", -1, "position: must be a whole number, 0 or more."),
        ("position", "3", "position: must be a whole number, 0 or more."),
        ("position", True, "position: must be a whole number, 0 or more."),
        ("mode_instructions", "Do this.", "mode_instructions: must be a list of text lines."),
        ("associated_tool_ids", ["agent_list_modes", 3], "associated_tool_ids: must be a list of text lines."),
        ("weak_signals", None, "weak_signals: must be a list of text lines."),
        ("display_name", 42, "display_name: must be text."),
        ("when_to_use", ["a list"], "when_to_use: must be text."),
    ],
)
def test_wrong_types_are_a_command_error(write_file, field, value, problem):
    message = import_error(write_file(document({**SCOUT, field: value})))
    assert f"modes[0] (key 'scout'): {problem}" in message


def test_a_mode_that_is_not_a_mapping_is_a_command_error(write_file):
    message = import_error(write_file(document(SCOUT, "scout_two")))
    assert "modes[1]: each mode must be a mapping of field names to values." in message


# --- YAML aliases: a small file that would expand to a huge one --------------------------------------------


def laughs(levels: int) -> str:
    """A declared tool whose parameters nest each level's mapping ten times in the next, through YAML aliases."""
    lines = ["format: aptix-modes", "version: 1", "modes: []", "declared_tools:", "- name: client_laughs",
             "  description: Expands.", "  parameters:", "    type: object", "    l0: &l0 {a: lol}"]
    for level in range(1, levels + 1):
        lines.append(f"    l{level}: &l{level} {{{', '.join(f'k{i}: *l{level - 1}' for i in range(10))}}}")
    return "\n".join(lines) + "\n"


def test_a_file_whose_aliases_expand_past_the_bound_is_refused_at_once_and_changes_nothing(write_file):
    path = write_file(laughs(8))  # under 1 KB; 10^8 mappings once its aliases are expanded
    assert path.stat().st_size < 1024
    started = time.monotonic()
    message = import_error(path)
    assert time.monotonic() - started < 5
    assert message == (
        f"{path} was not imported; nothing changed:\n"
        "  The file expands, through its YAML aliases, to more than 1,000,000 values; a mode file is far smaller."
    )


def test_anchors_and_aliases_of_a_hand_written_file_stay_allowed(write_file):
    text = "\n".join([
        "format: aptix-modes", "version: 1", "modes:", "- key: scout", "  display_name: Scout",
        "  description: Finds things.", "  when_to_use: &when Use this mode to look around.",
        "  mode_instructions: &steps [Look., Report.]", "- key: ranger", "  display_name: Ranger",
        "  description: Finds more.", "  when_to_use: *when", "  mode_instructions: *steps",
    ])
    import_modes(write_file(text))
    assert list(AgentMode.objects.filter(key__in=["scout", "ranger"]).values_list("when_to_use", flat=True)) == [
        "Use this mode to look around."
    ] * 2
