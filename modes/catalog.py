"""
The mode catalog service of AGN-014 §5: every read of the modes goes through here.

Lookups are by key (prompts and tools speak in keys); sessions store ids.

Reads are served from an in-process snapshot of the catalog. Before using it,
a process compares the snapshot's version with the catalog version row that
database triggers change on every write (modes.triggers); within one HTTP
request that comparison happens once. So a change made by any process (admin,
import, migration, SQL) is seen by every process on its next request, and the
catalog costs a request at most one small query whatever its size: none when
a query the request makes anyway has read the version too (reading a session
does, see VERSION_SQL and note_version).
"""

import threading
from dataclasses import dataclass, field

from asgiref.local import Local
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import request_finished, request_started
from django.db import connection

from agent_tools.contract import AgentTool, ClientTool
from agent_tools.registry import UnknownToolError, registry
from aptix_site.text import compact_json

from .listing import mode_list_payload
from .models import AgentMode, AgentModeSummary, DeclaredTool

# AGN-014 §6.2, word for word (note the typographic apostrophes).
MODE_SWITCHING_LINES = (
    "- If the user’s request clearly matches another mode’s \"when to use\" description, "
    "you may recommend switching.",
    "- If the user expresses interest in switching, follow the instructions in the "
    "agent_change_mode tool.",
    "- If you need more detail about modes, call the agent_list_modes tool.",
)


class UnknownModeError(LookupError):
    """A mode key that is not in the catalog; the message lists the keys that are."""

    def __init__(self, key, valid_keys):
        self.key = key
        self.valid_keys = list(valid_keys)
        super().__init__(f"Unknown mode key {key!r}. Valid keys: {', '.join(self.valid_keys)}.")


@dataclass(frozen=True)
class CatalogSnapshot:
    """The catalog as read at one version. Its modes are shared: treat them as read-only."""

    version: str | None
    modes: tuple[AgentMode, ...]
    declared_tools: tuple[DeclaredTool, ...] = ()
    by_key: dict[str, AgentMode] = field(init=False)
    by_id: dict[str, AgentMode] = field(init=False)
    available_modes_lines: tuple[str, ...] = field(init=False)
    search_texts: tuple[tuple[str, ...], ...] = field(init=False)
    # The declared tools by name, less any that a registered server tool shadows (modes.W002) or whose
    # parameters no vendor would take (modes.W003): a mode that lists those finds them unresolved.
    client_tools: dict[str, ClientTool] = field(init=False)
    _memo: dict = field(init=False, default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        set_ = object.__setattr__  # frozen: derived fields are computed once, here
        set_(self, "by_key", {mode.key: mode for mode in self.modes})
        set_(self, "by_id", {mode.pk: mode for mode in self.modes})
        set_(self, "available_modes_lines", tuple(f"- {mode.key}: {mode.when_to_use}" for mode in self.modes))
        set_(
            self,
            "search_texts",
            tuple(
                tuple(text.casefold() for text in (mode.key, mode.display_name, mode.description, mode.when_to_use))
                for mode in self.modes
            ),
        )
        set_(
            self,
            "client_tools",
            {tool.name: tool.as_client_tool() for tool in self.declared_tools if tool.is_usable()},
        )

    def memoized(self, key, build):
        """build(), computed once for this snapshot: for anything that depends only on the catalog."""
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    def listing_json(self, *, include_examples: bool) -> str:
        """The unfiltered agent_list_modes payload as JSON text, built once per snapshot."""
        return self.memoized(
            ("listing", include_examples),
            lambda: compact_json(mode_list_payload(list(self.modes), include_examples=include_examples)),
        )

    @property
    def default(self) -> AgentMode:
        for mode in self.modes:
            if mode.is_default:
                return mode
        raise ImproperlyConfigured("The mode catalog has no default mode (modes.E005).")


# The catalog version as a scalar subquery, for a query that every request makes anyway to select
# alongside its own columns: that saves the request a database round trip.
VERSION_SQL = "SELECT version FROM modes_catalogversion WHERE id = 1"

_latest: CatalogSnapshot | None = None
_request = Local()  # the version read and the snapshot checked during the current request
_load_lock = threading.Lock()


def _start_request(**kwargs):
    _request.snapshot = None
    _request.version = None
    _request.active = True


def _finish_request(**kwargs):
    _request.snapshot = None
    _request.version = None
    _request.active = False


def note_version(version: str | None) -> None:
    """Tell the catalog the version that VERSION_SQL just gave, so this request need not read it again."""
    if getattr(_request, "active", False) and _request.snapshot is None:
        _request.version = version


request_started.connect(_start_request, dispatch_uid="modes.catalog.start_request")
request_finished.connect(_finish_request, dispatch_uid="modes.catalog.finish_request")


def current_catalog() -> CatalogSnapshot:
    """The catalog as it is now: the cached snapshot if its version is still current."""
    global _latest
    checked = getattr(_request, "snapshot", None)
    if checked is not None:
        return checked
    version = getattr(_request, "version", None) or _read_version()
    snapshot = _latest
    if snapshot is None or version is None or snapshot.version != version:
        with _load_lock:  # threads that find the same new version load it once
            snapshot = _latest
            if snapshot is None or version is None or snapshot.version != version:
                snapshot = CatalogSnapshot(
                    version=version, modes=tuple(AgentMode.objects.all()), declared_tools=tuple(DeclaredTool.objects.all())
                )
                if version is not None:
                    _latest = snapshot
    if getattr(_request, "active", False):
        _request.snapshot = snapshot
    return snapshot


def _read_version() -> str | None:
    # Raw SQL: this runs on every request, and compiling the ORM query would
    # cost more than the query itself. It is read before the rows, so rows newer
    # than their label only cause one extra reload, never a stale snapshot.
    with connection.cursor() as cursor:
        cursor.execute(VERSION_SQL)
        row = cursor.fetchone()
    return row[0] if row else None


def get_all_modes() -> list[AgentModeSummary]:
    """Every mode in catalog order, as summaries."""
    return [mode.create_summary() for mode in current_catalog().modes]


def find_modes(*, text: str = "") -> list[AgentMode]:
    """Modes whose key, display name, description or when-to-use contains text, ignoring case."""
    catalog = current_catalog()
    needle = text.strip().casefold()
    if not needle:
        return list(catalog.modes)
    return [
        mode for mode, texts in zip(catalog.modes, catalog.search_texts) if any(needle in text for text in texts)
    ]


def list_modes_json(*, text: str = "", include_examples: bool = False) -> str:
    """The agent_list_modes payload as JSON text; the unfiltered one is built once per catalog version."""
    if not text.strip():
        return current_catalog().listing_json(include_examples=include_examples)
    return compact_json(mode_list_payload(find_modes(text=text), include_examples=include_examples))


def get_mode(mode_key: str) -> AgentMode:
    """The mode with this key; UnknownModeError names the key and the valid ones otherwise."""
    catalog = current_catalog()
    try:
        return catalog.by_key[mode_key]
    except (KeyError, TypeError):
        raise UnknownModeError(mode_key, catalog.by_key) from None


def get_mode_by_id(mode_id: str) -> AgentMode:
    """The mode with this id (sessions store ids); AgentMode.DoesNotExist if there is none."""
    mode = current_catalog().by_id.get(mode_id)
    # A mode committed after this request read the catalog version is not in the snapshot yet.
    return mode if mode is not None else AgentMode.objects.get(pk=mode_id)


def get_tools_for_mode(mode_key: str) -> list[str]:
    """The tool names the mode enables, as a new list the caller may change."""
    return list(get_mode(mode_key).associated_tool_ids)


def all_tools() -> list[AgentTool | ClientTool]:
    """Every tool a mode can enable, registered or declared, sorted by name."""
    catalog = current_catalog()

    def build():
        tools = {**catalog.client_tools, **{tool.name: tool for tool in registry.tools()}}
        return [tools[name] for name in sorted(tools)]

    return list(catalog.memoized("all-tools", build))


def get_tool(name: str) -> AgentTool | ClientTool:
    """The registered or declared tool of this name; UnknownToolError if there is none."""
    if registry.has(name):
        return registry.get(name)
    try:
        return current_catalog().client_tools[name]
    except (KeyError, TypeError):
        raise UnknownToolError(name) from None


def tools_for_mode(mode: AgentMode) -> list[AgentTool | ClientTool]:
    """The tools a mode enables, sorted by name; always-available tools are always in."""
    return [tool for tool in all_tools() if mode_enables(mode, tool)]


def mode_enables(mode: AgentMode, tool: AgentTool | ClientTool) -> bool:
    return tool.always_available or tool.name in mode.associated_tool_ids


def unresolved_tool_ids(tool_ids) -> list[str]:
    """The ids among tool_ids that name no tool, registered or declared (modes.W001)."""
    return registry.unresolved(tool_ids, declared=current_catalog().client_tools)


def get_default_mode() -> AgentMode:
    return current_catalog().default


def build_system_prompt(current_mode_key: str | None) -> str:
    """The Mode Catalog block of AGN-014 §6.2; an empty or unknown key means the default mode."""
    catalog = current_catalog()
    current = current_mode_key if current_mode_key in catalog.by_key else catalog.default.key
    return "\n".join(
        [
            f"Current Mode: {current}",
            "",
            "Available Modes:",
            *catalog.available_modes_lines,
            "",
            "Mode Switching:",
            *MODE_SWITCHING_LINES,
        ]
    )
