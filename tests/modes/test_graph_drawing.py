"""
The mode graph in the admin (issue 29): the published catalog drawn by Graphviz as an SVG on a staff page, the
default and the modes the model cannot enter marked, each allowed switch an arrow with its count of the last 30
days, refusals and declined proposals beside them; mode names are text, never markup; without dot the page says
so and a check warns.
"""

import re
from html import unescape

import pytest
from django.urls import reverse

from modes import graph_drawing
from modes.catalog import published_catalog, published_release
from modes.models import AgentMode
from modes.graph import ModeSwitchRefused
from sessions_app.services import ask_mode_change, create_session, set_session_mode
from sessions_app.tools import answer_mode_change

pytestmark = pytest.mark.django_db

GRAPH_URL = "/admin/sessions_app/modechange/graph/"


def svg_texts(html: str) -> list[str]:
    """The text lines of the SVG's labels, as a browser shows them."""
    start = html.index('id="mode-graph"')
    svg = html[start : html.index("</svg>", start)]
    return [unescape(text) for text in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def test_the_page_draws_each_mode_marked_and_each_allowed_switch_with_its_count(admin_client, alice, graph):
    session = create_session(release=published_release(), owner=alice, org=None, mode_key="review")
    for key in ("review_notes", "review", "review_notes"):
        catalog = published_catalog()
        set_session_mode(catalog=catalog, session_id=session.pk, mode=catalog.mode(key), reason="Agreed.", user=alice)

    response = admin_client.get(GRAPH_URL)
    assert response.status_code == 200
    texts = svg_texts(response.content.decode())
    for line in ["General", "(general)", "(default)", "Deploy", "(model cannot enter)", "(switches to any mode)"]:
        assert line in texts
    catalog = published_catalog()
    dot = graph_drawing.mode_graph_dot(
        modes=catalog.modes, default=catalog.default, counts={"transitions": [], "refusals": []}
    )
    # review -> general and review -> review_notes, review_notes -> review: the explicit targets, nothing else.
    assert dot.count("->") == 3
    assert texts.count("2") == 1 and texts.count("1") == 1  # review -> review_notes twice, back once


def test_refusals_and_the_proposals_the_user_declined_are_drawn_beside_the_switches(
    settings, admin_client, alice, graph
):
    session = create_session(release=published_release(), owner=alice, org=None, mode_key="review")
    catalog = published_catalog()
    with pytest.raises(ModeSwitchRefused):
        set_session_mode(catalog=catalog, session_id=session.pk, mode=catalog.mode("deploy"), reason="r", user=alice)
    settings.MODE_CHANGE_CONFIRMATION = "user"
    for choice in ("stay", "cancel"):
        question = ask_mode_change(
            catalog=catalog, session_id=session.pk, mode=catalog.mode("review_notes"), reason="Fits.", user=alice,
            branch=False, channel="mcp",
        )
        answer_mode_change(
            catalog=catalog, session_id=session.pk, confirmation_id=question.pk, user=alice, choice=choice,
            channel=question.channel,
        )

    texts = svg_texts(admin_client.get(GRAPH_URL).content.decode())
    assert "refused 1" in texts and "declined 2" in texts
    dot = graph_drawing.mode_graph_dot(
        modes=catalog.modes, default=catalog.default,
        counts={"transitions": [], "refusals": [], "declined": [{"from": "review", "to": "review_notes", "count": 2}]},
    )
    review, notes = (f"m{[mode.key for mode in catalog.modes].index(key)}" for key in ("review", "review_notes"))
    assert f'{review} -> {notes} [label="declined 2", style="dotted", color="#b35c00", fontcolor="#b35c00"];' in dot
    assert f'{review} -> {notes} [label="0"];' in dot  # the allowed switch itself, nobody took it


def test_modes_that_may_switch_anywhere_draw_no_arrow_but_those_taken(alice):
    modes = [AgentMode(pk=f"{n:032X}", key=f"mode_{n}", display_name=f"Mode {n}", is_default=n == 0) for n in range(30)]
    counts = {"transitions": [{"from": "mode_3", "to": "mode_7", "count": 4, "branches": 0}], "refusals": []}
    dot = graph_drawing.mode_graph_dot(modes=modes, default=modes[0], counts=counts)
    assert dot.count("->") == 1
    assert 'm3 -> m7 [label="4", style="dashed"]' in dot


def test_a_mode_name_is_drawn_as_text_never_as_markup_or_dot_syntax(admin_client, new_mode):
    new_mode("evil", display_name='</text><script>alert(1)</script>" ] \\N x [')
    response = admin_client.get(GRAPH_URL)
    html = response.content.decode()
    assert "<script>alert(1)" not in html
    assert '</text><script>alert(1)</script>" ] \\N x [' in svg_texts(html)


def test_the_modes_list_and_the_releases_page_link_to_the_graph(admin_client):
    for page in ("admin:modes_agentmode_changelist", "admin:modes_catalogrevision_releases"):
        assert f'href="{GRAPH_URL}"' in admin_client.get(reverse(page)).content.decode()


@pytest.mark.parametrize("lacking", ["view_agentmode", "view_modechange"])
def test_staff_without_a_view_permission_it_needs_cannot_see_the_graph(staff_client, django_user_model, lacking):
    client = staff_client()
    assert client.get(GRAPH_URL).status_code == 200
    user = django_user_model.objects.get(username="staff")
    user.user_permissions.remove(*user.user_permissions.filter(codename=lacking))
    assert client.get(GRAPH_URL).status_code == 403


def test_without_graphviz_the_page_says_so_and_a_check_warns(admin_client, monkeypatch, tmp_path):
    monkeypatch.setattr(graph_drawing, "GRAPHVIZ", tmp_path)
    response = admin_client.get(GRAPH_URL)
    assert response.status_code == 200
    assert "The mode graph cannot be drawn here: Graphviz is not installed" in response.content.decode()
    [warning] = graph_drawing.check_graphviz()
    assert (warning.id, warning.hint) == (
        "modes.W006",
        "Run make install, which unpacks Graphviz from Debian's packages into .venv/graphviz.",
    )


def test_when_dot_fails_the_page_says_so(admin_client, monkeypatch, tmp_path):
    (tmp_path / "dot").write_text("#!/bin/sh\nexit 3\n")
    (tmp_path / "dot").chmod(0o755)
    monkeypatch.setattr(graph_drawing, "GRAPHVIZ", tmp_path)
    response = admin_client.get(GRAPH_URL)
    assert "Graphviz&#x27;s dot failed (exit status 3)." in response.content.decode()


def test_the_graph_of_a_revision_draws_its_modes_and_only_the_switches_made_under_it(admin_client, alice, graph, new_mode):
    session = create_session(release=published_release(), owner=alice, org=None, mode_key="review")
    before = published_catalog()
    set_session_mode(catalog=before, session_id=session.pk, mode=before.mode("review_notes"), reason="r", user=alice)
    new_mode("scout")  # the next revision, published at once
    after = published_catalog()
    for key in ("review", "review_notes", "review"):
        set_session_mode(catalog=after, session_id=session.pk, mode=after.mode(key), reason="r", user=alice)

    earlier = admin_client.get(GRAPH_URL, {"revision": before.revision}).content.decode()
    assert "with only the switches made" in earlier and "Scout" not in svg_texts(earlier)
    assert svg_texts(earlier).count("1") == 1 and "2" not in svg_texts(earlier)  # review -> review_notes, once
    assert f"revision={before.revision}" in earlier
    assert "Scout" in svg_texts(admin_client.get(GRAPH_URL, {"revision": after.revision}).content.decode())
    for wrong in ("999", "two", ""):
        assert admin_client.get(GRAPH_URL, {"revision": wrong}).status_code == 404
