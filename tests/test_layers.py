"""
The floors of the house: the tool framework (agent_tools) and the site's shared plumbing (aptix_site's API,
error and middleware modules) import no app. The site's wiring (settings, URLs, the WSGI and ASGI entry
points) names the apps by design.
"""

import ast
from pathlib import Path

import pytest

PROJECT_DIR = Path(__file__).resolve().parent.parent
APPS = {"modes", "sessions_app", "accounts", "agent_api", "mcp_server"}
WIRING = {"settings.py", "urls.py", "wsgi.py", "asgi.py"}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("floor", ["aptix_site", "agent_tools"])
def test_a_floor_imports_no_app(floor):
    offending = {
        str(path.relative_to(PROJECT_DIR)): sorted(imported_packages(path) & APPS)
        for path in (PROJECT_DIR / floor).rglob("*.py")
        if path.name not in WIRING and imported_packages(path) & APPS
    }
    assert offending == {}


def test_the_check_sees_an_import_of_an_app(tmp_path):
    module = tmp_path / "module.py"
    module.write_text("import json\nfrom modes.catalog import get_mode\n", encoding="utf-8")
    assert imported_packages(module) & APPS == {"modes"}
