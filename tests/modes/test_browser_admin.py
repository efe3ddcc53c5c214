"""
The first hour of an admin, in a real headless Chromium against the app served by runserver (production
settings) on a scratch database of the suite's kind: log in, open the mode list, edit a mode's
when-to-use and save it, get a readable error for a two-line one, read the preview, find the edit on the
mode's History page and revert it from there; under review, edit as
one admin, evaluate its routing, approve as another and publish on the Catalog releases page, then roll the next edit out to
part of the sessions and abort it; the API docs show the token header
whole; and the mode graph of the seed catalog plus two custom modes is drawn. No page breaks its
Content-Security-Policy (Chromium reports each violation on the console). Every page is kept as a screenshot
(tests/browser.py says where).
"""

from contextlib import contextmanager

import pytest
from playwright.sync_api import expect

from ..browser import chromium_page, require_chromium, screenshot_folder
from ..expected import SEED_MODES
from ..servers import production_env, run_django, scratch_database, serving

USERNAME, PASSWORD = "reviewer", "a-reviewer-password-for-tests"
NEW_SENTENCE = (
    "Use this mode when the user wants to write, review or validate an Aptix DDR specification, following SYS-001 "
    "to the letter, section by section, with every open question listed at the end for the author to settle."
)


@contextmanager
def admin_site(passwords: dict, setup: str = "", **settings):
    """
    runserver with production settings on a scratch database whose superusers are passwords' user names, after
    the code setup has run there.
    """
    require_chromium()
    with scratch_database() as env:
        run_django(
            env,
            "from django.contrib.auth import get_user_model; "
            + "; ".join(
                f"get_user_model().objects.create_superuser({name!r}, '{name}@example.com', {password!r})"
                for name, password in passwords.items()
            ),
        )
        if setup:
            run_django(env, setup)
        with serving("runserver", production_env(env, **settings)) as server:
            yield server


@pytest.fixture(scope="module")
def site():
    with admin_site({USERNAME: PASSWORD}) as server:
        yield server


@pytest.fixture
def page(tmp_path):
    with chromium_page(tmp_path / "profile") as page:
        yield page


@pytest.fixture
def csp_violations(page):
    """What Chromium refused on the pages the test opens because of their Content-Security-Policy."""
    refused = []
    def note(message):
        if "Content Security Policy" in message.text:
            refused.append(message.text)

    page.on("console", note)
    return refused


@pytest.fixture(scope="module")
def shots(request):
    """shots(page, name) keeps the page as NN-name.png, numbered in the order the tests took them."""
    folder = screenshot_folder(request.config)
    count = iter(range(1, 100))

    def shoot(page, name):
        page.screenshot(path=folder / f"{next(count):02d}-{name}.png", full_page=True)

    return shoot


def log_in(page, base):
    page.goto(f"{base}/")
    page.get_by_role("link", name="Admin", exact=True).click()
    page.get_by_label("Username:").fill(USERNAME)
    page.get_by_label("Password:").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


def test_an_admin_edits_a_modes_when_to_use_reads_the_preview_and_reverts_it_from_its_history(
    site, page, shots, csp_violations
):
    page.goto(f"{site.base}/")
    expect(page.get_by_role("heading", name="Aptix Modes", exact=True)).to_be_visible()
    shots(page, "front-door")

    log_in(page, site.base)
    expect(page.locator("#site-name")).to_have_text("Aptix Modes administration")
    shots(page, "admin-index")

    page.locator("#modes-agentmode").get_by_role("link", name="Agent modes").click()
    rows = page.locator("#result_list tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.locator("th a")).to_have_text(["general", "ddr_authoring", "workflow_authoring"])
    expect(page.locator("#changelist-filter")).to_contain_text("By status")
    expect(page.locator("#changelist-filter")).to_contain_text("By source")
    shots(page, "mode-list")

    page.get_by_role("link", name="ddr_authoring").click()
    when_to_use = page.locator("textarea[name=when_to_use]")
    expect(when_to_use).to_have_attribute("maxlength", "300")
    shots(page, "mode-form")

    when_to_use.fill(NEW_SENTENCE)
    # The whole sentence shows: nothing is scrolled out of the box, and the box spans the form.
    assert when_to_use.evaluate("box => box.scrollHeight <= box.clientHeight")
    assert when_to_use.bounding_box()["width"] > page.viewport_size["width"] / 2
    expect(page.locator(".field-when_to_use .help")).to_contain_text("at most 300 characters")
    page.get_by_role("button", name="Save and continue editing").click()
    expect(page.locator(".messagelist .success")).to_contain_text("was changed successfully")
    expect(when_to_use).to_have_value(NEW_SENTENCE)
    expect(page.locator(".field-system_prompt pre")).to_contain_text(f"- ddr_authoring: {NEW_SENTENCE}")
    shots(page, "mode-saved")

    when_to_use.fill("Use this mode for DDRs.\nAnd for nothing else.")
    page.get_by_role("button", name="Save and continue editing").click()
    expect(page.locator(".errornote")).to_be_visible()
    expect(page.locator(".field-when_to_use .errorlist")).to_have_text(
        "This must be a single line: it is rendered inline in the system prompt."
    )
    shots(page, "two-line-when-to-use-refused")

    page.reload()
    preview = page.locator(".field-system_prompt pre")
    expect(preview).to_contain_text("Current Mode: ddr_authoring")
    expect(preview).to_contain_text(f"- ddr_authoring: {NEW_SENTENCE}")
    expect(page.locator(".field-instructions pre")).to_contain_text("Follow the SYS-001 structure for every DDR")
    tools = page.locator(".aptix-preview-tools")
    expect(tools.locator("tbody tr:not(.aptix-unresolved) code")).to_have_text(
        ["agent_change_mode", "agent_list_modes"]
    )
    expect(tools.locator(".aptix-unresolved code")).to_have_text(["agent_workflow_registry", "agent_ddr_manager"])
    expect(tools.locator(".aptix-unresolved").first).to_contain_text("Resolves to no tool")
    page.locator(".aptix-preview-tools").scroll_into_view_if_needed()
    shots(page, "mode-preview")

    # The edit is one revision on the mode's History page, by its user; reverting to the seed is a new one.
    page.get_by_role("link", name="History", exact=True).click()
    rows = page.locator("#change-history tbody tr")
    expect(rows.first).to_contain_text("ddr_authoring changed: when_to_use")
    expect(rows.first).to_contain_text(USERNAME)
    expect(rows.last).to_contain_text("ddr_authoring created")
    shots(page, "mode-history")
    rows.last.get_by_role("button", name="Revert to this").click()
    expect(page.locator(".messagelist .success")).to_contain_text("Reverted to its state at revision 1: revision")
    expect(rows.first).to_contain_text("ddr_authoring changed: when_to_use")
    expect(rows).to_have_count(3)
    shots(page, "mode-reverted")
    page.goto(f"{site.base}/admin/modes/agentmode/")
    page.get_by_role("link", name="ddr_authoring").click()
    seed_sentence = SEED_MODES["ddr_authoring"]["whenToUse"]
    expect(page.locator("textarea[name=when_to_use]")).to_have_value(seed_sentence)
    expect(page.locator(".field-system_prompt pre")).to_contain_text(f"- ddr_authoring: {seed_sentence}")
    assert csp_violations == []


def test_a_declared_tools_parameters_are_in_monospace_without_an_inline_style(site, page, shots, csp_violations):
    log_in(page, site.base)
    page.goto(f"{site.base}/admin/modes/declaredtool/add/")
    parameters = page.locator("textarea[name=parameters]")
    assert "monospace" in parameters.evaluate("box => getComputedStyle(box).fontFamily")
    shots(page, "declared-tool-form")
    assert csp_violations == []


def test_a_long_list_item_stays_on_one_line(site, page, shots):
    log_in(page, site.base)
    page.goto(f"{site.base}/admin/modes/agentmode/")
    page.get_by_role("link", name="workflow_authoring").click()
    instructions = page.locator("textarea[name=mode_instructions]")
    instructions.fill("One instruction long enough to wrap in a box of any width, " * 8 + "\nA second instruction.")
    # Two items in a box of four rows: the long one scrolls sideways rather than wrapping onto more rows.
    assert instructions.evaluate("box => box.scrollWidth > box.clientWidth")
    assert instructions.evaluate("box => box.scrollHeight <= box.clientHeight")
    expect(page.locator(".field-mode_instructions .help")).to_contain_text("One item per line")
    shots(page, "list-field")


def test_the_api_docs_show_the_token_header_whole_and_every_operation(site, page, shots, csp_violations):
    page.goto(f"{site.base}/api/docs/")
    expect(page.locator(".swagger-ui .info .description")).to_contain_text("Authorization: Token <key>")
    expect(page.locator(".swagger-ui .opblock-summary-path", has_text="/api/modes/").first).to_be_visible()
    shots(page, "api-docs")
    assert csp_violations == []


# --- under review: one admin edits, another approves, then it is published ----------------------------------

REVIEW_PASSWORD = "a-password-for-release-tests"
RELEASED_SENTENCE = "Use this mode for small talk and anything that fits no other mode."
STAGED_SENTENCE = "Use this mode for small talk, greetings and anything that fits no other mode."


@pytest.fixture(scope="module")
def reviewed_site():
    with admin_site(dict.fromkeys(("author", "approver"), REVIEW_PASSWORD), CATALOG_APPROVALS="1") as server:
        yield server


def log_in_as(page, base, username):
    page.goto(f"{base}/admin/login/")
    page.get_by_label("Username:").fill(username)
    page.get_by_label("Password:").fill(REVIEW_PASSWORD)
    page.get_by_role("button", name="Log in").click()


def confirm(page, link):
    page.get_by_role("link", name=link, exact=True).click()
    page.locator("input[type=submit]").click()


def test_an_edit_is_approved_by_another_admin_and_published_on_the_releases_page(
    reviewed_site, page, shots, csp_violations
):
    base = reviewed_site.base
    log_in_as(page, base, "author")
    page.goto(f"{base}/admin/modes/agentmode/")
    page.get_by_role("link", name="general", exact=True).click()
    page.locator("textarea[name=when_to_use]").fill(RELEASED_SENTENCE)
    page.get_by_role("button", name="Save and continue editing").click()
    banner = page.locator(".messagelist .warning", has_text="Agents see revision")
    expect(banner).to_contain_text("Agents see revision 1; revision 2 is pending with 0 of 1 approvals.")
    shots(page, "release-banner")

    banner.get_by_role("link", name="Catalog releases").click()
    expect(page.locator("#pending")).to_contain_text("Revision 2 (mode general: when_to_use), by author")
    expect(page.locator("#pending pre.aptix-added").first).to_have_text(f"+- general: {RELEASED_SENTENCE}")
    expect(page.locator("#pending").get_by_role("link", name="Approve")).to_have_count(0)  # not its own author
    shots(page, "releases-pending")
    page.get_by_role("button", name="Log out").click()

    log_in_as(page, base, "approver")
    page.goto(f"{base}/admin/modes/catalogrevision/releases/")
    expect(page.locator("#routing")).to_contain_text("No evaluation of revision 2 yet.")
    confirm(page, "Evaluate with the offline scorer")
    expect(page.locator(".messagelist .success")).to_have_text("Revision 2 is evaluated.")
    expect(page.locator("#routing h3")).to_contain_text("offline scorer")
    # The heat map's shades come from the stylesheet's classes: the CSP allows no inline style.
    right = page.locator("#routing td[class^='aptix-heat-right-']").first
    assert right.evaluate("cell => getComputedStyle(cell).backgroundColor") not in ("rgba(0, 0, 0, 0)", "transparent")
    shots(page, "releases-routing")
    confirm(page, "Approve")
    expect(page.locator(".messagelist .success")).to_have_text("Revision 2 is approved.")
    confirm(page, "Publish")
    expect(page.locator(".messagelist .success")).to_have_text("Revision 2 is published to agents.")
    expect(page.locator("#published")).to_contain_text("Agents are served revision 2")
    expect(page.locator("#pending")).to_contain_text("No revision is pending.")
    shots(page, "releases-published")

    page.goto(f"{base}/admin/modes/agentmode/")
    expect(page.locator(".messagelist .warning", has_text="Agents see revision")).to_have_count(0)
    page.get_by_role("link", name="ddr_authoring", exact=True).click()
    expect(page.locator(".field-system_prompt pre")).to_contain_text(f"- general: {RELEASED_SENTENCE}")
    shots(page, "released-preview")

    # The next edit, rolled out to a quarter of the sessions with a guard, then aborted (issue 43).
    page.goto(f"{base}/admin/modes/agentmode/")
    page.get_by_role("link", name="general", exact=True).click()
    page.locator("textarea[name=when_to_use]").fill(STAGED_SENTENCE)
    page.get_by_role("button", name="Save and continue editing").click()
    page.goto(f"{base}/admin/modes/catalogrevision/releases/")
    page.get_by_role("link", name="Roll out to part of the sessions").click()
    page.get_by_label("Share of the sessions (%)").fill("25")
    page.locator("select[name=guard_metric]").select_option("declined")
    shots(page, "rollout-form")
    page.locator("input[type=submit]").click()
    expect(page.locator(".messagelist .success")).to_have_text("Revision 3 is being rolled out.")
    expect(page.locator("#rollout")).to_contain_text("Revision 3 is being rolled out to 25% of the sessions")
    expect(page.locator("#rollout table.aptix-cohorts tbody tr")).to_have_count(2)
    shots(page, "releases-rollout")
    page.get_by_role("link", name="Abort", exact=True).click()
    page.get_by_label("Why").fill("Checked enough.")
    page.locator("input[type=submit]").click()
    expect(page.locator(".messagelist .success")).to_have_text("The rollout of revision 3 is aborted.")
    expect(page.locator("#rollout-ended")).to_contain_text("was aborted by approver")
    expect(page.locator("#rollout-ended")).to_contain_text("Checked enough.")
    expect(page.locator("#published")).to_contain_text("Agents are served revision 2")
    assert csp_violations == []


# Two custom modes in the seed catalog: review, which may only go back to general or on to ddr_authoring, and
# deploy, which the model may never enter; and switches agents made (and one the graph refused) to count.
GRAPH_SETUP = """
from django.contrib.auth import get_user_model
from modes.catalog import Release, published_catalog
from modes.graph import ModeSwitchRefused
from modes.models import AgentMode
from modes.services import catalog_change
from sessions_app.services import create_session, set_session_mode
with catalog_change(by=None):  # one revision, published at once: what agents are served
    AgentMode.objects.create(key="review", display_name="Review", when_to_use="Use this mode when the user wants "
        "a change reviewed.", switch_targets=["general", "ddr_authoring"])
    AgentMode.objects.create(key="deploy", display_name="Deploy", when_to_use="Use this mode when the user wants "
        "a change deployed.", llm_can_enter=False)
agent = get_user_model().objects.create_user("agent")
catalog = published_catalog()
session = create_session(release=Release(catalog), owner=agent, org=None)
for key in ["review", "ddr_authoring", "general", "review", "general", "review", "deploy"]:
    try:
        set_session_mode(catalog=catalog, session_id=session.pk, mode=catalog.mode(key), reason="Agreed.", user=agent)
    except ModeSwitchRefused:
        pass
"""


@pytest.fixture(scope="module")
def graph_site():
    with admin_site({USERNAME: PASSWORD}, setup=GRAPH_SETUP) as server:
        yield server


def test_the_mode_graph_page_draws_the_catalog_with_the_switches_taken(graph_site, page, shots, csp_violations):
    log_in(page, graph_site.base)
    page.goto(f"{graph_site.base}/admin/modes/agentmode/")
    page.get_by_role("link", name="Mode graph").click()
    graph = page.locator("#mode-graph svg")
    expect(graph).to_be_visible()
    for label in ("General", "Review", "Deploy", "(model cannot enter)", "(default)", "refused 1"):
        expect(graph.locator("text", has_text=label).first).to_be_visible()
    shots(page, "mode-graph")
    assert csp_violations == []
