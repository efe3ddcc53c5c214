"""
The mode graph as a picture (issue 29): the published catalog's modes and the switches the model may make, in
Graphviz's DOT language, laid out by `dot -Tsvg` into an SVG the admin page embeds. Each allowed switch is an arrow
labelled with how often agents took it in the period, 0 included: an allowed switch nobody takes is worth seeing.
A mode without switch targets may switch to any mode the model may enter: n x n arrows (870 for 30 modes), so its box
says so, and only the switches taken from it are drawn, dashed. Refusals are red, dotted; the switches the model
proposed and the user declined (issue 40) orange, dotted, beside them. Labels are admin text: escaped for DOT and
by dot for XML, they are text only in the SVG. Graphviz is unpacked into .venv/graphviz by `make
install`; when it is missing or fails, GraphUnavailable says why, and modes.W006 warns at `manage.py check`.
"""

import logging
import subprocess
from pathlib import Path

from django.conf import settings
from django.core import checks
from django.urls import reverse

from .graph import may_switch

logger = logging.getLogger(__name__)

GRAPHVIZ = Path(settings.BASE_DIR) / ".venv" / "graphviz"
DOT_TIMEOUT_SECONDS = 10
DOT_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\r": "", "\n": "\\n"})


class GraphUnavailable(Exception):
    """The graph cannot be drawn: dot is missing or failed. The message says which, for the admin page."""


def mode_graph_dot(*, modes, default, counts: dict) -> str:
    """The graph in DOT (counts: transition_counts()'s). Nodes are m0, m1, ...: only labels carry admin text."""
    node = {mode.key: f"m{index}" for index, mode in enumerate(modes)}
    taken = {(t["from"], t["to"]): t["count"] for t in counts["transitions"]}
    lines = [
        "digraph modes {",
        '  graph [rankdir=LR, bgcolor="transparent", fontname="Helvetica", nodesep=0.3, ranksep=0.6];',
        '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="Helvetica", fontsize=11];',
        '  edge [fontname="Helvetica", fontsize=10, color="#417690", fontcolor="#264b5d"];',
    ]
    for mode in modes:
        notes = [mode.key]
        attributes = {"URL": reverse("admin:modes_agentmode_change", args=[mode.pk])}
        if mode.pk == default.pk:
            notes.append("default")
            attributes["peripheries"] = "2"
        if not mode.llm_can_enter:
            notes.append("model cannot enter")
            attributes.update(style="rounded,filled,dashed", fillcolor="#eeeeee")
        if not mode.switch_targets:
            notes.append("switches to any mode")
        label = "\n".join([mode.display_name, *(f"({note})" for note in notes)])
        lines.append(f"  {node[mode.key]} [{_attributes(label=label, **attributes)}];")
    def edge(source, target, **attributes):
        if source in node and target in node:  # counts may name modes that are gone
            lines.append(f"  {node[source]} -> {node[target]} [{_attributes(**attributes)}];")

    allowed = [(s.key, t.key) for s in modes if s.switch_targets for t in modes if s.pk != t.pk and may_switch(s, t)]
    for source, target in allowed:
        edge(source, target, label=str(taken.get((source, target), 0)))
    for (source, target), count in taken.items():  # taken from a mode that may switch anywhere (or since changed)
        if (source, target) not in allowed:
            edge(source, target, label=str(count), style="dashed")
    for refusal in counts["refusals"]:
        red_dotted = {"style": "dotted", "color": "#ba2121", "fontcolor": "#ba2121"}
        edge(refusal["from"], refusal["to"], label=f"refused {refusal['count']}", **red_dotted)
    for declined in counts.get("declined", ()):  # proposals the user declined (issue 40)
        amber_dotted = {"style": "dotted", "color": "#b35c00", "fontcolor": "#b35c00"}
        edge(declined["from"], declined["to"], label=f"declined {declined['count']}", **amber_dotted)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _attributes(**attributes) -> str:
    """Each value in a DOT double-quoted string: backslashes doubled (so no \\N, \\G or \\l escape fires), quotes
    escaped, line breaks DOT's centred line break."""
    return ", ".join(f'{name}="{value.translate(DOT_ESCAPES)}"' for name, value in attributes.items())


def render_svg(dot_source: str) -> str:
    """dot's SVG of dot_source, from its <svg> element on (the XML prolog and doctype would not embed)."""
    dot = GRAPHVIZ / "dot"
    if not dot.exists():
        raise GraphUnavailable(f"Graphviz is not installed ({dot} is missing): run make install.")
    libraries = [str(path) for path in GRAPHVIZ.glob("usr/lib/*-linux-gnu")]
    environment = {"LD_LIBRARY_PATH": ":".join(libraries), "GVBINDIR": ":".join(f"{lib}/graphviz" for lib in libraries)}
    try:
        done = subprocess.run(
            [str(dot), "-Kdot", "-Tsvg"], input=dot_source, capture_output=True, text=True,
            env=environment, timeout=DOT_TIMEOUT_SECONDS,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        logger.warning("dot could not draw the mode graph: %s", error)
        raise GraphUnavailable(f"Graphviz's dot could not run: {error}") from None
    start = done.stdout.find("<svg")
    if done.returncode != 0 or start < 0:
        logger.warning("dot could not draw the mode graph (exit %s): %s", done.returncode, done.stderr.strip())
        raise GraphUnavailable(f"Graphviz's dot failed (exit status {done.returncode}).")
    return done.stdout[start:]


def check_graphviz(app_configs=None, **kwargs) -> list:
    """modes.W006: the admin's mode graph needs dot."""
    try:
        render_svg("digraph { a -> b }\n")
    except GraphUnavailable as error:
        hint = "Run make install, which unpacks Graphviz from Debian's packages into .venv/graphviz."
        return [checks.Warning(f"The admin cannot draw the mode graph: {error}", hint=hint, id="modes.W006")]
    return []
