"""
The floors of the house, for every app: each may import only the apps below it. The site's plumbing
(aptix_site) and the tool framework (agent_tools) import no app; the domain apps (accounts, modes on it, then
sessions_app on top of both) never import a way of serving; the front door imports no app, the health checks
read the domain apps only; the serving layers sit on top (agent_api, then mcp_server on agent_api). The site's
wiring (settings, URLs, the WSGI and ASGI entry points) names the apps by design.
"""

import ast
from pathlib import Path

import pytest
from django.apps import apps

PROJECT_DIR = Path(__file__).resolve().parent.parent
WIRING = {"settings.py", "urls.py", "wsgi.py", "asgi.py"}
PLUMBING = {"aptix_site"}
DOMAIN = {"accounts", "modes", "sessions_app"}
# What each app may import besides itself: the floors below it.
MAY_IMPORT = {
    "aptix_site": set(),
    "agent_tools": PLUMBING,
    "front_door": PLUMBING,
    "accounts": PLUMBING,
    "modes": PLUMBING | {"agent_tools", "accounts"},  # a rollout names organizations
    "sessions_app": PLUMBING | {"agent_tools", "accounts", "modes"},
    "health": PLUMBING | {"agent_tools"} | DOMAIN,
    "agent_api": PLUMBING | {"agent_tools"} | DOMAIN,
    "mcp_server": PLUMBING | {"agent_tools", "agent_api"} | DOMAIN,
}
APPS = set(MAY_IMPORT)


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_every_app_of_the_project_has_its_floor():
    installed = {
        Path(config.path).name for config in apps.get_app_configs() if Path(config.path).parent == PROJECT_DIR
    }
    assert installed | PLUMBING == APPS


def test_the_floors_have_no_cycle():
    below = {app: set(allowed) for app, allowed in MAY_IMPORT.items()}
    while below:
        ground = {app for app, allowed in below.items() if not allowed & below.keys()}
        assert ground, f"these apps may import each other: {sorted(below)}"
        below = {app: allowed for app, allowed in below.items() if app not in ground}


@pytest.mark.parametrize("app", sorted(APPS))
def test_an_app_imports_only_the_floors_below_it(app):
    offending = {
        str(path.relative_to(PROJECT_DIR)): sorted(forbidden)
        for path in (PROJECT_DIR / app).rglob("*.py")
        if not (app in PLUMBING and path.name in WIRING)
        for forbidden in [imported_packages(path) & APPS - {app} - MAY_IMPORT[app]]
        if forbidden
    }
    assert offending == {}


def test_the_check_sees_an_import_of_an_app(tmp_path):
    module = tmp_path / "module.py"
    module.write_text("import json\nfrom modes.catalog import get_mode\n", encoding="utf-8")
    assert imported_packages(module) & APPS == {"modes"}


def test_no_module_imports_the_retired_per_row_history():
    # django-simple-history is gone: the catalog revisions are the one history (its migrations included: 0006 no
    # longer imports it, and 0011 reads its tables as plain historical models).
    importing = sorted(
        str(path.relative_to(PROJECT_DIR))
        for app in APPS
        for path in (PROJECT_DIR / app).rglob("*.py")
        if "simple_history" in imported_packages(path)
    )
    assert importing == []
