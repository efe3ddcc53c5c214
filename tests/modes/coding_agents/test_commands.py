"""import_modes and export_modes with coding agents' files: a repository in one step, one report, all or nothing."""

import os
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from modes.catalog import published_release
from modes.models import AgentMode, CatalogHead
from sessions_app.services import create_session

from .conftest import IMPORTED_KEYS, ROO_RULES, ROOMODES, write_tree

pytestmark = pytest.mark.django_db


def run(command, *args):
    out = StringIO()
    call_command(command, *map(str, args), stdout=out, stderr=StringIO())
    return out.getvalue()


def catalog():
    return list(AgentMode.objects.order_by("pk").values())


def latest():
    return CatalogHead.objects.get(pk=1).latest


def refused(*args):
    """The CommandError of a refused import; asserts that nothing changed."""
    before, revision = catalog(), latest()
    with pytest.raises(CommandError) as caught:
        run("import_modes", *args)
    assert (catalog(), latest()) == (before, revision)
    return str(caught.value)


def test_a_folder_holding_all_four_formats_imports_in_one_revision_with_one_report(repository):
    revision = latest()
    out = run("import_modes", repository)
    assert latest() == revision + 1
    assert set(IMPORTED_KEYS) <= set(AgentMode.objects.values_list("key", flat=True))
    for key in IMPORTED_KEYS:
        assert f"mode {key}: created" in out
    assert "Created 4, updated 0, left 0 unchanged." in out
    report = out.split("Fidelity report:\n", 1)[1]
    for path in (".roomodes", ".roo/rules-docs-writer/01-style.md", ".kilocodemodes", ".opencode/agent/review.md",
                 ".claude/agents/test-runner.md"):
        assert path in report
    assert "src/app.py" not in out


def test_a_dry_run_reports_the_same_and_changes_nothing(repository):
    before, revision = catalog(), latest()
    out = run("import_modes", repository, "--dry-run")
    assert (catalog(), latest()) == (before, revision)
    assert "Dry run, nothing changed: would have created 4" in out
    assert "Fidelity report:" in out


def test_an_imported_role_definition_reaches_a_session_in_that_mode(repository, alice, alice_client):
    run("import_modes", repository)
    session = create_session(release=published_release(), owner=alice, org=None, mode_key="docs_writer")
    body = alice_client.get(f"/api/sessions/{session.pk}/context/").json()
    instructions = body["modeInstructions"]
    assert instructions.startswith("You are Roo, a technical writer.\n\nYou write docs that people finish reading:\n"
                                   "  - short sentences\n")
    assert "Keep sentences short." in instructions and ROO_RULES.strip() in instructions
    assert body["systemPrompt"].startswith("Current Mode: docs_writer\n\nAvailable Modes:\n")


def test_importing_again_needs_update_and_then_finds_the_same_modes(repository):
    run("import_modes", repository)
    ids = dict(AgentMode.objects.filter(key__in=IMPORTED_KEYS).values_list("key", "pk"))
    message = refused(repository)
    for key in IMPORTED_KEYS:
        assert f'mode {key!r} already exists; import with update on (--update, "update": true) to update it' in message
    revision = latest()
    out = run("import_modes", repository, "--update")
    assert "Created 0, updated 0, left 4 unchanged." in out
    assert latest() == revision
    assert dict(AgentMode.objects.filter(key__in=IMPORTED_KEYS).values_list("key", "pk")) == ids


def test_a_key_in_two_files_is_a_problem_naming_both_unless_update_lets_the_later_update_it(tmp_path, repository):
    write_tree(repository, {".claude/agents/review.md": "---\nname: review\ndescription: Reviews twice.\n---\n\nBody.\n"})
    message = refused(repository)
    assert ".opencode/agent/review.md" in message and ".claude/agents/review.md" in message
    out = run("import_modes", repository, "--update")
    assert AgentMode.objects.get(key="review").when_to_use == "Reviews code for quality and best practices"
    replaced = "dropped (.opencode/agent/review.md gives this mode too, and --update lets its value replace this file's)"
    assert f".claude/agents/review.md: mode 'review': when_to_use: {replaced}" in out
    assert f".claude/agents/review.md: mode 'review': prompt: {replaced}" in out


def test_a_key_of_an_existing_mode_from_elsewhere_is_updated_in_place_under_update(repository, custom_mode):
    write_tree(repository, {".claude/agents/research.md": "---\nname: research\ndescription: Find sources.\n---\n\nGo.\n"})
    assert "mode 'research' already exists" in refused(repository)
    run("import_modes", repository, "--update")
    research = AgentMode.objects.get(key="research")
    assert (research.pk, research.when_to_use, research.prompt) == (custom_mode.pk, "Find sources.", "Go.")


def test_bad_files_are_refused_together_each_problem_naming_its_file_and_mode(repository):
    write_tree(repository, {
        ".kilocodemodes": '{"customModes": [',
        ".claude/agents/silent.md": "---\nname: silent\n---\n\nNo description.\n",
        ".opencode/agent/odd.md": "---\ndescription: !!python/object:os.system echo\n---\n\nBody\n",
    })
    message = refused(repository)
    assert message.startswith(f"{repository} was not imported; nothing changed:\n")
    assert ".kilocodemodes" in message
    assert ".claude/agents/silent.md" in message and "silent" in message
    assert ".opencode/agent/odd.md" in message


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_a_rules_file_linked_from_outside_the_folder_is_refused(tmp_path, repository):
    secret = tmp_path / "secret.txt"
    secret.write_text("the server's secrets\n")
    (repository / ".roo/rules-docs-writer/02-leak.md").symlink_to(secret)
    write_tree(repository, {".claude/agents/silent.md": "---\nname: silent\n---\n\nNo description.\n"})
    message = refused(repository)
    assert f".roo/rules-docs-writer/02-leak.md: a link to {secret}, outside the folder imported." in message
    assert ".claude/agents/silent.md" in message  # the files read are judged too: one run reports every problem


def test_an_oversized_file_is_refused(repository, settings):
    settings.API_MAX_IMPORT_BYTES = 100
    assert ".roomodes: larger than the 100 bytes an import takes." in refused(repository)


def test_a_folder_without_mode_files_says_so(tmp_path):
    (tmp_path / "README.md").write_text("# nothing here\n")
    assert "No file holds a coding agent's modes" in refused(tmp_path)


def test_one_file_of_another_name_is_read_as_the_format_from_says(tmp_path):
    path = tmp_path / "team-modes.yaml"
    path.write_text(ROOMODES)
    run("import_modes", path, "--from", "roo")
    assert AgentMode.objects.get(key="docs_writer").display_name == "📝 Documentation Writer"


def test_one_roomodes_file_is_imported_with_the_rules_folder_beside_it(repository):
    run("import_modes", repository)
    before, revision = catalog(), latest()
    out = run("import_modes", repository / ".roomodes", "--update")
    assert ".roo/rules-docs-writer/01-style.md: mode 'docs_writer'" in out
    assert (catalog(), latest()) == (before, revision)  # the rules stay in the mode's custom instructions


@pytest.mark.parametrize("path, key", [(".claude/agents/test-runner.md", "test_runner"),
                                       (".opencode/agent/review.md", "review")])
def test_one_agent_file_is_known_by_the_folders_its_path_ends_with(repository, path, key):
    out = run("import_modes", repository / path)
    assert f"mode {key}: created" in out and f"{path}: mode {key!r}" in out


@pytest.mark.parametrize("agent", ["roo", "kilo", "opencode", "claude-code"])
def test_exporting_and_importing_again_gives_the_same_catalog(repository, tmp_path, agent):
    run("import_modes", repository)
    folder = tmp_path / agent
    out = run("export_modes", "--to", agent, "--custom-only", "--output", folder)
    assert "Fidelity report:" in out
    before, revision = catalog(), latest()
    assert "left 4 unchanged" in run("import_modes", folder, "--update")
    assert (catalog(), latest()) == (before, revision)


def test_export_never_overwrites_a_file_without_force(repository, tmp_path):
    run("import_modes", repository)
    folder = tmp_path / "out"
    run("export_modes", "--to", "claude-code", "--custom-only", "--output", folder)
    written = folder / ".claude/agents/test-runner.md"
    written.write_text("edited by hand\n")
    with pytest.raises(CommandError, match="pass --force to overwrite them: .claude/agents/"):
        run("export_modes", "--to", "claude-code", "--custom-only", "--output", folder)
    assert written.read_text() == "edited by hand\n"
    run("export_modes", "--to", "claude-code", "--custom-only", "--output", folder, "--force")
    assert written.read_text() != "edited by hand\n"


def test_export_writes_nothing_when_a_folder_stands_in_one_files_place(repository, tmp_path):
    # The files before it were written, and stayed.
    run("import_modes", repository)
    folder = tmp_path / "out"
    (folder / ".claude/agents/test-runner.md").mkdir(parents=True)
    folders = r"These are folders in .*, not files; nothing was written: \.claude/agents/test-runner\.md\.$"
    with pytest.raises(CommandError, match=folders):
        run("export_modes", "--to", "claude-code", "--custom-only", "--output", folder, "--force")
    assert os.listdir(folder / ".claude/agents") == ["test-runner.md"]


def test_export_writes_nothing_when_a_file_stands_in_a_folders_place(repository, tmp_path):
    # .roomodes was written before the rules file whose folder could not be made.
    run("import_modes", repository)
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / ".roo").write_text("not a folder")
    blocked = r"files are not folders; nothing was written: \.roo/rules-docs-writer/01-style\.md"
    with pytest.raises(CommandError, match=blocked):
        run("export_modes", "--to", "roo", "--custom-only", "--output", folder)
    assert os.listdir(folder) == [".roo"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
@pytest.mark.parametrize("link", [".claude", ".claude/agents/test-runner.md"])
def test_export_writes_nothing_through_a_link_out_of_its_folder_even_with_force(repository, tmp_path, link):
    run("import_modes", repository)
    outside, folder = tmp_path / "outside", tmp_path / "out"
    outside.mkdir()
    (folder / link).parent.mkdir(parents=True, exist_ok=True)
    target = outside if link == ".claude" else outside / "created-by-the-export.md"  # a folder; a dangling link
    (folder / link).symlink_to(target)
    for force in ([], ["--force"]):
        with pytest.raises(CommandError, match=r"written out of .* through a link \(or a loop of links\); nothing was written: \.claude/"):
            run("export_modes", "--to", "claude-code", "--custom-only", "--output", folder, *force)
    assert list(outside.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_a_dangling_link_inside_the_folder_is_a_file_that_exists(repository, tmp_path):
    run("import_modes", repository)
    folder = tmp_path / "out"
    (folder / ".claude/agents").mkdir(parents=True)
    (folder / ".claude/agents/test-runner.md").symlink_to(folder / "nowhere.md")
    with pytest.raises(CommandError, match="pass --force to overwrite them: .claude/agents/test-runner.md"):
        run("export_modes", "--to", "claude-code", "--custom-only", "--output", folder)
    assert not (folder / "nowhere.md").exists()


def test_export_to_a_format_needs_an_output_folder():
    with pytest.raises(CommandError, match="--to writes a coding agent's files into the folder --output names"):
        run("export_modes", "--to", "roo")


def test_force_without_output_is_refused_not_ignored():
    with pytest.raises(CommandError, match=r"^--force lets --output overwrite files; standard output has none\.$"):
        run("export_modes", "--force")


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_a_loop_of_links_is_a_problem_of_the_import_and_of_the_export(repository, tmp_path):
    loop = repository / ".roo/rules-docs-writer/02-loop.md"
    loop.symlink_to(loop)
    for path in (repository, repository / ".roomodes"):
        assert ".roo/rules-docs-writer/02-loop.md: a link in a loop of links" in refused(path)
    loop.unlink()
    run("import_modes", repository)
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / ".roomodes").symlink_to(folder / ".roomodes")
    with pytest.raises(CommandError, match=r"through a link \(or a loop of links\); nothing was written: \.roomodes"):
        run("export_modes", "--to", "roo", "--custom-only", "--output", folder, "--force")


def test_a_folder_import_reads_the_prompt_file_an_opencode_config_names(tmp_path):
    write_tree(tmp_path, {
        "opencode.json": '{"agent": {"code-review": {"description": "Reviews code.", '
                         '"prompt": "{file:./prompts/code-review.txt}"}}}',
        "prompts/code-review.txt": "You review code.\n\nBe kind.\n",
    })
    out = run("import_modes", tmp_path)
    assert AgentMode.objects.get(key="code_review").prompt == "You review code.\n\nBe kind."
    assert "read from prompts/code-review.txt" in out


def test_exporting_back_into_the_repository_and_importing_it_again_leaves_the_catalog_as_it_was(repository):
    run("import_modes", repository)
    before, revision = catalog(), latest()
    run("export_modes", "--to", "roo", "--custom-only", "--output", repository, "--force")
    assert "left 4 unchanged" in run("import_modes", repository, "--update")
    assert (catalog(), latest()) == (before, revision)
