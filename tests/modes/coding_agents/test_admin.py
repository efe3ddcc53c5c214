"""
The admin's import page: the same import, permission and report as the command's, from uploaded files. And its
export page: the published modes as a coding agent's files, to read and to download, as the command writes them.
"""

import io
import re
import struct
import tracemalloc
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils.html import escape

from modes.catalog import published_catalog
from modes.coding_agents.formats import FORMATS
from modes.coding_agents.uploads import uploaded_files
from modes.models import AgentMode, CatalogHead

from .conftest import IMPORTED_KEYS, REPOSITORY

pytestmark = pytest.mark.django_db
PAGE = reverse("admin:modes_agentmode_import")


def zipped(files: dict, top="repository-main/") -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, content in files.items():
            archive.writestr(top + path, content)
    return SimpleUploadedFile("repository.zip", buffer.getvalue(), content_type="application/zip")


def state():
    return list(AgentMode.objects.order_by("pk").values()), CatalogHead.objects.get(pk=1).latest


def test_the_modes_list_links_to_the_import_page(admin_client):
    page = admin_client.get(reverse("admin:modes_agentmode_changelist")).content.decode()
    assert f'href="{PAGE}"' in page


@pytest.mark.parametrize("permissions", [("add_agentmode",), ("change_agentmode",)])
def test_the_link_is_not_shown_to_staff_the_page_would_refuse(staff_client, permissions):
    page = staff_client(*permissions).get(reverse("admin:modes_agentmode_changelist")).content.decode()
    assert f'href="{PAGE}"' not in page


def test_a_zip_of_a_repository_imports_every_mode_with_the_report(admin_client):
    revision = CatalogHead.objects.get(pk=1).latest
    response = admin_client.post(PAGE, {"files": [zipped(REPOSITORY)], "dry_run": ""})
    assert response.status_code == 200
    page = response.content.decode()
    assert f"Imported: revision {revision + 1}" in page
    assert set(IMPORTED_KEYS) <= set(AgentMode.objects.values_list("key", flat=True))
    assert 'id="fidelity-report"' in page and ".roo/rules-docs-writer/01-style.md" in page


def test_files_chosen_one_by_one_are_known_by_their_names_and_a_dry_run_changes_nothing(admin_client):
    before = state()
    uploads = [SimpleUploadedFile(".roomodes", REPOSITORY[".roomodes"].encode()),
               SimpleUploadedFile(".kilocodemodes", REPOSITORY[".kilocodemodes"].encode())]
    page = admin_client.post(PAGE, {"files": uploads, "dry_run": "on"}).content.decode()
    assert "Dry run: nothing changed" in page and "docs_writer: created" in page and "translate: created" in page
    assert state() == before


def test_a_file_chosen_that_no_coding_agent_reads_is_listed_as_not_read(admin_client):
    uploads = [SimpleUploadedFile(".roomodes", REPOSITORY[".roomodes"].encode()),
               SimpleUploadedFile("notes.txt", b"Remember the milk.")]
    page = admin_client.post(PAGE, {"files": uploads, "dry_run": "on"}).content.decode()
    assert "Not read, as no coding agent keeps modes in them: notes.txt." in page


def test_bad_files_show_every_problem_and_change_nothing(admin_client):
    before = state()
    files = {**REPOSITORY, ".claude/agents/silent.md": "---\nname: silent\n---\n\nBody\n"}
    page = admin_client.post(PAGE, {"files": [zipped(files)]}).content.decode()
    assert "Nothing was imported" in page and ".claude/agents/silent.md" in page
    assert state() == before


def test_a_file_that_is_not_a_zip_or_not_text_is_a_problem(admin_client):
    uploads = [SimpleUploadedFile("broken.zip", b"not a zip"), SimpleUploadedFile(".roomodes", b"\xff\xfe\x00bad")]
    page = admin_client.post(PAGE, {"files": uploads}).content.decode()
    assert "broken.zip: not a .zip archive that can be read (File is not a zip file)." in page
    assert ".roomodes: not UTF-8 text." in page


def test_a_corrupt_member_of_a_zip_is_a_problem_not_a_500(admin_client):
    data = bytearray(zipped({".roomodes": REPOSITORY[".roomodes"]}).read())
    start = data.index(b"customModes"[:4]) if b"customModes"[:4] in data else 40
    data[start:start + 8] = b"CORRUPT!"  # the stored bytes no longer match their CRC-32
    upload = SimpleUploadedFile("repository.zip", bytes(data), content_type="application/zip")
    before = state()
    response = admin_client.post(PAGE, {"files": [upload]})
    assert response.status_code == 200
    assert ".roomodes: cannot be read from its archive" in response.content.decode()
    assert state() == before


def test_a_zip_whose_member_names_are_not_the_utf_8_they_claim_is_a_problem_not_a_500(admin_client):
    data = zipped({".roo/rules-docs-writer/\u00e9.md": "Be brief."}).read()  # é sets the archive's UTF-8 flag
    upload = SimpleUploadedFile("repository.zip", data.replace("\u00e9".encode(), b"\xff\xfe"))
    response = admin_client.post(PAGE, {"files": [upload]})
    assert response.status_code == 200
    assert "repository.zip: not a .zip archive that can be read" in response.content.decode()


def test_a_zip_is_read_for_its_mode_files_only_as_a_folder_is(admin_client):
    files = {
        **REPOSITORY, "logo.png": b"\x89PNG\r\n\x1a\n\xff", "docs/guide.md": "# Guide\n",
        ".git/.roomodes": "not: [yaml", "node_modules/pkg/.roomodes": "not: [yaml",
    }
    upload = zipped(files)
    page = admin_client.post(PAGE, {"files": [upload], "dry_run": "on"}).content.decode()
    assert "Dry run: nothing changed" in page and "logo.png" not in page and ".git" not in page


@pytest.mark.parametrize("top", ["", "repository-main/"])
def test_a_zip_of_the_claude_folder_alone_keeps_its_paths(admin_client, top):
    upload = zipped({".claude/agents/test-runner.md": REPOSITORY[".claude/agents/test-runner.md"]}, top=top)
    page = admin_client.post(PAGE, {"files": [upload], "dry_run": "on"}).content.decode()
    assert "test_runner: created" in page


def test_a_zip_read_as_one_format_reads_that_formats_files_only(admin_client):
    page = admin_client.post(PAGE, {"files": [zipped(REPOSITORY)], "format": "claude-code", "dry_run": "on"})
    page = page.content.decode()
    assert "test_runner: created" in page and "docs_writer" not in page and "src/app.py" not in page


@pytest.mark.parametrize("permissions", [(), ("add_agentmode",), ("change_agentmode",)])
def test_staff_without_both_mode_permissions_may_not_open_or_post_it(staff_client, permissions):
    client = staff_client(*permissions)
    before = state()
    assert client.get(PAGE).status_code == 403
    assert client.post(PAGE, {"files": [zipped(REPOSITORY)]}).status_code == 403
    assert state() == before


def test_staff_with_both_mode_permissions_may_import(staff_client):
    client = staff_client("add_agentmode", "change_agentmode")
    assert client.post(PAGE, {"files": [zipped(REPOSITORY)]}).status_code == 200
    assert AgentMode.objects.filter(key__in=IMPORTED_KEYS).count() == 4


# --- The export page -------------------------------------------------------------------------------------

EXPORT = reverse("admin:modes_agentmode_export")


@pytest.mark.parametrize("format_name", list(FORMATS))
def test_the_export_page_shows_each_file_and_the_report_of_the_published_modes(admin_client, format_name):
    writing = FORMATS[format_name].write(list(published_catalog().modes))
    page = admin_client.get(EXPORT, {"format": format_name}).content.decode()
    assert 'id="fidelity-report"' in page and 'id="download-zip"' in page
    for file in writing.files:
        assert f"<code>{escape(file.path)}</code>" in page and escape(file.content) in page
    assert page.count('<tr class="aptix-') == len(writing.report)


def test_the_download_holds_exactly_the_files_an_export_writes(admin_client):
    admin_client.post(PAGE, {"files": [zipped(REPOSITORY)]})  # published as it is imported (no approvals asked)
    response = admin_client.get(EXPORT, {"format": "claude-code", "custom_only": "on", "download": "1"})
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == 'attachment; filename="aptix-modes-claude-code.zip"'
    custom = published_catalog().exported_modes(custom_only=True)
    assert {mode.key for mode in custom} == set(IMPORTED_KEYS)
    written = FORMATS["claude-code"].write(custom).files
    assert unzipped(response) == [(file.path, file.content.encode()) for file in written]


def unzipped(response) -> list[tuple[str, bytes]]:
    """Each member of the .zip answered, in order, with its bytes: a path twice would show."""
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        return [(name, archive.read(name)) for name in archive.namelist()]


@pytest.mark.parametrize("custom_only", [False, True])
def test_the_pages_download_button_downloads_the_files_it_shows(admin_client, custom_only):
    # The button's form repeats the choices as hidden fields: an unticked box goes back as "False", still False.
    admin_client.post(PAGE, {"files": [zipped(REPOSITORY)]})
    chosen = {"format": "roo", "custom_only": "on"} if custom_only else {"format": "roo"}
    page = admin_client.get(EXPORT, chosen).content.decode()
    button = page[page.index('id="export-files"'):page.index('id="download-zip"')]
    response = admin_client.get(EXPORT, dict(re.findall(r'type="hidden" name="(\w+)" value="([^"]*)"', button)))
    modes = published_catalog().exported_modes(custom_only=custom_only)
    assert unzipped(response) == [(file.path, file.content.encode()) for file in FORMATS["roo"].write(modes).files]


def test_an_export_with_no_file_says_so_and_offers_no_zip(admin_client):
    assert FORMATS["claude-code"].write(published_catalog().exported_modes(custom_only=True)).files == []
    response = admin_client.get(EXPORT, {"format": "claude-code", "custom_only": "on"})
    page = response.content.decode()
    assert response.status_code == 200 and "No file to write" in page and 'id="download-zip"' not in page


def test_an_unknown_format_is_the_forms_error_not_a_500(admin_client):
    response = admin_client.get(EXPORT, {"format": "cursor"})
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()


def test_the_export_needs_the_view_permission_and_the_list_links_to_it_only_then(staff_client):
    from django.contrib.auth.models import Permission, User

    client = staff_client()  # every view permission
    assert f'href="{EXPORT}"' in client.get(reverse("admin:modes_agentmode_changelist")).content.decode()
    assert client.get(EXPORT, {"format": "roo"}).status_code == 200
    User.objects.get(username="staff").user_permissions.remove(Permission.objects.get(codename="view_agentmode"))
    assert client.get(EXPORT, {"format": "roo"}).status_code == 403


@pytest.mark.parametrize("logged_in", [False, True])
def test_someone_not_staff_is_sent_to_log_in(client, alice, logged_in):
    if logged_in:
        client.force_login(alice)  # a user of the API, not staff
    response = client.get(EXPORT, {"format": "roo"})
    assert response.status_code == 302 and "/login/" in response["Location"]


def lying_zip(size: int) -> bytes:
    """A .zip whose one member, size bytes of zeros, states that it holds 10 bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive, archive.open(".roomodes", "w") as member:
        for _ in range(size // 2**20):
            member.write(bytes(2**20))
    data = bytearray(buffer.getvalue())
    struct.pack_into("<I", data, 22, 10)  # the local header's uncompressed size
    struct.pack_into("<I", data, data.rfind(b"PK\x01\x02") + 24, 10)  # the central directory's
    return bytes(data)


def test_a_member_whose_stated_size_lies_is_read_no_further_than_the_import_takes():
    upload = SimpleUploadedFile("bomb.zip", lying_zip(256 * 2**20))
    tracemalloc.start()
    try:
        files, problems = uploaded_files([upload], from_format=None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert files == [] and problems == [".roomodes: cannot be read from its archive (Bad CRC-32 for file '.roomodes')."]
    assert peak < 32 * 2**20  # 256 MB of zeros were not unpacked into memory


def test_a_damaged_lzma_member_is_a_problem_not_a_500(admin_client):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_LZMA) as archive:
        archive.writestr(".roomodes", REPOSITORY[".roomodes"])
    data = bytearray(buffer.getvalue())
    start = 30 + len(".roomodes")  # the member's data, after its local header
    data[start + 9:start + 30] = b"\xff" * 21
    response = admin_client.post(PAGE, {"files": [SimpleUploadedFile("repository.zip", bytes(data))], "dry_run": "on"})
    assert response.status_code == 200
    assert ".roomodes: cannot be read from its archive" in response.content.decode()
