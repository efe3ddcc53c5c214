"""
Every relative link in the docs leads somewhere: a reader who follows one from the README, ARCHITECTURE.md,
docs/, benchmarks/README.md or tests/README.md lands on a file that exists and, for `file.md#anchor` or
`#anchor`, on a heading of that file (its GitHub-style slug). Links to the web are not followed. Reads the
files only: no database, no Django.
"""

import os
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted(
    [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *(ROOT / "docs").glob("*.md"), ROOT / "benchmarks" / "README.md",
     ROOT / "tests" / "README.md"]
)
# The design records live beside the checkout, not in it: the one place outside it that the docs may link to.
# It is checked when it is there (a clone on its own has no such folder).
SPECS = ROOT.parent / "shared" / "specs"

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text: str):
    """The lines outside fenced code blocks."""
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield line


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text, lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a Markdown file's headings; a repeated heading gets -1, -2, ... as on GitHub."""
    seen, found = {}, set()
    for line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if match:
            base = slug(match.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[str]:
    """The link targets in a Markdown file's prose (code blocks, code spans and HTML comments left out)."""
    text = re.sub(r"<!--.*?-->", "", "\n".join(prose_lines(path.read_text(encoding="utf-8"))), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return INLINE_LINK.findall(text) + REFERENCE_LINK.findall(text)


def broken_links(doc: Path) -> list[str]:
    broken = []
    for target in links(doc):
        if SCHEME.match(target):
            continue  # the web, mail
        path_part, _, anchor = target.partition("#")
        resolved = Path(os.path.normpath(doc.parent / unquote(path_part))) if path_part else doc
        if not resolved.is_relative_to(ROOT):
            if not resolved.is_relative_to(SPECS):
                broken.append(f"{target}: leads out of the checkout")
            elif SPECS.is_dir() and not resolved.exists():
                broken.append(f"{target}: no such file")
            continue
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and unquote(anchor) not in anchors(resolved):
            broken.append(f"{target}: no heading '{anchor}' in {resolved.relative_to(ROOT)}")
    return broken


@pytest.mark.parametrize("doc", DOCS, ids=lambda doc: str(doc.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(doc):
    broken = broken_links(doc)
    assert not broken, f"broken links in {doc.relative_to(ROOT)}:\n" + "\n".join(broken)


def test_the_docs_link_to_each_other():
    """The README leads to every file of docs/, so none is left where no reader finds it."""
    readme = links(ROOT / "README.md")
    assert sorted(f"docs/{doc.name}" for doc in (ROOT / "docs").glob("*.md")) == sorted(
        {target.partition("#")[0] for target in readme if target.startswith("docs/")}
    )
