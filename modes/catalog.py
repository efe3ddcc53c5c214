"""
How the catalog reaches agents: the catalog service of AGN-014 §5, serving the published release.

The one path, from an admin's edit to an agent's answer:

1. An edit changes the rows (AgentMode, DeclaredTool) through modes.services, inside recording_revision.
   Database triggers (modes.triggers) give the catalog version row (CatalogVersion) a new random version on
   every write to those tables, whoever makes it, so a change made past the services is seen too.
2. modes.revisions records the rows as a new numbered, immutable revision when the version differs from the
   one last recorded (modes.revision_store keeps only what each revision changed).
3. modes.releases publishes a revision: at once when CATALOG_APPROVALS is 0, otherwise once approved. Publishing
   sets the version row's published revision and draws a new publication token.
4. Here, each process serves the published revision as an in-memory snapshot labelled with that token. A
   request's first read of the catalog (current_catalog()) reads the version row (one small query) and loads
   the published revision only when the token differs from its snapshot's; the request then keeps that
   snapshot to its end. So a publication is served by every worker on its next request, a change no revision
   records is never served, and reads never write the catalog.

Everything agents are told or validated against comes from current_catalog(): the listing, agent_list_modes,
the system prompt, session contexts, MCP, and mode_for_session() for a new session's or a mode change's mode.
Lookups are by key (prompts and tools speak in keys); sessions store ids. working_catalog() is the rows as
admins left them (the admin's previews); catalog_at_revision() is any revision (diffs, ?revision=N).
"""

import threading
from dataclasses import dataclass, field

from asgiref.local import Local
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import request_finished, request_started

from agent_tools.contract import AgentTool, ClientTool
from agent_tools.registry import UnknownToolError, registry
from aptix_site import fixed_sql
from aptix_site.service_errors import NotFound
from aptix_site.text import compact_json

from .graph import ModeSwitchRefused, may_switch
from .listing import mode_list_payload
from .models import AgentMode, AgentModeSummary, CatalogRevision, CatalogVersion, DeclaredTool
from .revision_store import entries_at, rows_of

# AGN-014 §6.2, word for word (note the typographic apostrophes).
MODE_SWITCHING_LINES = (
    "- If the user’s request clearly matches another mode’s \"when to use\" description, you may recommend switching.",
    "- If the user expresses interest in switching, follow the instructions in the agent_change_mode tool.",
    "- If you need more detail about modes, call the agent_list_modes tool.",
)


class UnknownModeError(NotFound, LookupError):
    """A mode key that is not in the catalog; the message lists the keys that are."""

    def __init__(self, key, valid_keys):
        self.key = key
        self.valid_keys = list(valid_keys)
        super().__init__(f"Unknown mode key {key!r}. Valid keys: {', '.join(self.valid_keys)}.")


class ModeBeingRemovedError(UnknownModeError):
    """A published mode whose row a change not published yet has deleted: no session can be put in it."""

    def __init__(self, key, valid_keys):
        super().__init__(key, valid_keys)
        self.args = (
            f"Mode {key!r} is being removed from the catalog (a change not yet published deletes it), so no "
            f"session can enter it. Valid keys: {', '.join(self.valid_keys)}.",
        )


class UnknownRevisionError(NotFound, LookupError):
    def __init__(self, number, latest):
        self.number = number
        known = f"revisions run from 1 to {latest}" if latest else "none has been recorded yet"
        super().__init__(f"There is no catalog revision {number}; {known}.")


@dataclass(frozen=True)
class CatalogSnapshot:
    """The catalog as read at one version and revision. Its modes are shared: treat them as read-only."""

    version: str | None  # the token of its publication, for the published catalog; None for any other
    revision: int | None  # None: the rows as admins left them (working_catalog)
    modes: tuple[AgentMode, ...]
    declared_tools: tuple[DeclaredTool, ...] = ()
    was_published: bool = True  # False for a revision that agents were never served (pending, unpublished)
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
        searched = [(mode.key, mode.display_name, mode.description, mode.when_to_use) for mode in self.modes]
        set_(self, "search_texts", tuple(tuple(text.casefold() for text in texts) for texts in searched))
        usable = [tool for tool in self.declared_tools if tool.is_usable()]
        set_(self, "client_tools", {tool.name: tool.as_client_tool() for tool in usable})

    def memoized(self, key, build):
        """build(), computed once for this snapshot: for anything that depends only on the catalog."""
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    def find(self, text: str = "") -> list[AgentMode]:
        """Modes whose key, display name, description or when-to-use contains text, ignoring case."""
        needle = text.strip().casefold()
        if not needle:
            return list(self.modes)
        return [mode for mode, texts in zip(self.modes, self.search_texts) if any(needle in text for text in texts)]

    def listing(self, *, text: str = "", include_examples: bool = False) -> dict:
        """The agent_list_modes payload; the unfiltered one is built once per snapshot."""
        build = lambda: mode_list_payload(  # noqa: E731
            self.find(text), include_examples=include_examples, catalog_revision=self.revision
        )
        return build() if text.strip() else self.memoized(("listing", include_examples), build)

    def listing_json(self, *, text: str = "", include_examples: bool = False) -> str:
        """listing() as JSON text; the unfiltered one is built once per snapshot."""
        build = lambda: compact_json(self.listing(text=text, include_examples=include_examples))  # noqa: E731
        return build() if text.strip() else self.memoized(("listing-json", include_examples), build)

    @property
    def default(self) -> AgentMode:
        for mode in self.modes:
            if mode.is_default:
                return mode
        raise ImproperlyConfigured("The mode catalog has no default mode (modes.E005).")

    def mode(self, key: str) -> AgentMode:
        """The mode with this key; UnknownModeError names the key and the valid ones otherwise."""
        try:
            return self.by_key[key]
        except (KeyError, TypeError):
            raise UnknownModeError(key, self.by_key) from None

    def system_prompt(self, current_mode_key: str | None) -> str:
        """The Mode Catalog block of AGN-014 §6.2; an empty or unknown key means the default mode."""
        current = current_mode_key if current_mode_key in self.by_key else self.default.key
        return "\n".join(
            [
                f"Current Mode: {current}",
                "",
                "Available Modes:",
                *self.available_modes_lines,
                "",
                "Mode Switching:",
                *MODE_SWITCHING_LINES,
            ]
        )

    def served(self, mode: AgentMode) -> AgentMode:
        """The mode a session in mode is served as: itself as published, else the default mode (AGN-014 §6.3)."""
        return self.by_id.get(mode.pk) or self.default

    def all_tools(self) -> list[AgentTool | ClientTool]:
        """Every tool a mode can enable, registered or declared, sorted by name."""

        def build():
            tools = {**self.client_tools, **{tool.name: tool for tool in registry.tools()}}
            return [tools[name] for name in sorted(tools)]

        return list(self.memoized("all-tools", build))

    def tools_for_mode(self, mode: AgentMode) -> list[AgentTool | ClientTool]:
        """The tools a mode enables, sorted by name; always-available tools are always in."""
        return [tool for tool in self.all_tools() if mode_enables(mode, tool)]

    def unresolved_tool_ids(self, tool_ids) -> list[str]:
        """The ids among tool_ids that name no tool, registered or declared (modes.W001)."""
        return [name for name in tool_ids if not registry.has(name) and name not in self.client_tools]

    def switch_targets(self, mode: AgentMode) -> tuple[AgentMode, ...]:
        """The modes the model may switch a session in mode to, in catalog order, mode itself included."""
        return self.memoized(("switch-targets", mode.pk), lambda: tuple(m for m in self.modes if may_switch(mode, m)))

    def switch_target_keys(self, mode: AgentMode) -> tuple[str, ...]:
        """The keys of switch_targets(mode): what agent_change_mode's mode enum lists to a session in mode."""
        return tuple(target.key for target in self.switch_targets(mode))

    def switch_refusal(self, *, from_mode_id: str, target: AgentMode) -> ModeSwitchRefused | None:
        """
        Why a session in the mode of this id may not be switched to target, or None if it may. A mode this
        catalog does not have is served as the default mode (AGN-014 §6.3), and so held to its policy.
        """
        source = self.by_id.get(from_mode_id) or self.default
        if may_switch(source, target):
            return None
        allowed = [mode.key for mode in self.switch_targets(source) if mode.pk != source.pk]
        return ModeSwitchRefused(current=source.key, target=target.key, allowed=allowed)

    def entry_sources(self, target: AgentMode) -> tuple[list[str], bool]:
        """
        The ids of the modes the model may switch to target from, and whether it may from a mode this catalog
        does not have (as from the default mode): switch_refusal's answer as a condition a database can test.
        """
        return [mode.pk for mode in self.modes if may_switch(mode, target)], may_switch(self.default, target)


@dataclass(frozen=True)
class CatalogState:
    """The catalog version row as read_state() reads it; CatalogVersion's docstring says what each field is."""

    version: str
    revision: int
    recorded_version: str
    published: int
    published_version: str

    @property
    def unrecorded(self) -> bool:
        """A committed change that no revision records yet (made past the ORM): agents are not served it."""
        return self.version != self.recorded_version


_latest: CatalogSnapshot | None = None
_load_lock = threading.Lock()


@dataclass
class RequestCatalog:
    """What the current request has read of the catalog: the version row, then the snapshot it served."""

    state: CatalogState | None = None
    snapshot: CatalogSnapshot | None = None


# The snapshot a request is served, and the version row it checked, kept from its first read of the catalog to its
# end, so that one request reads the row once and sees one catalog throughout. One object, set when the request
# starts and filled by its first read, rather than an attribute each: every read or write of an asgiref Local
# takes its lock, and every request makes several.
_request = Local()


def _start_request(**kwargs):
    _request.catalog = RequestCatalog()


def _finish_request(**kwargs):
    _request.catalog = None


request_started.connect(_start_request, dispatch_uid="modes.catalog.start_request")
request_finished.connect(_finish_request, dispatch_uid="modes.catalog.finish_request")


def current_catalog() -> CatalogSnapshot:
    """The published catalog: the cached snapshot if no other revision has been published since."""
    return _current().snapshot


def _current() -> RequestCatalog:
    """The current request's catalog, read once per request; outside a request, read anew at each call."""
    global _latest
    current = getattr(_request, "catalog", None) or RequestCatalog()
    if current.snapshot is not None:
        return current
    state = read_state()
    snapshot = _latest
    if snapshot is None or state is None or snapshot.version != state.published_version:
        with _load_lock:  # threads that find the same new publication load it once
            snapshot = _latest
            if snapshot is None or state is None or snapshot.version != state.published_version:
                snapshot = _load(state)
                if snapshot.version:
                    _latest = snapshot
    current.state, current.snapshot = state, snapshot
    return current


def _load(state: CatalogState | None) -> CatalogSnapshot:
    entries = entries_at(state.published) if state and state.published else []
    if not entries:
        # No revision published yet (a database being migrated or flushed): the rows, never cached.
        return working_catalog()
    return snapshot_of(state.published, entries, version=state.published_version, was_published=True)


def snapshot_of(number: int, entries, *, version: str | None = None, was_published: bool) -> CatalogSnapshot:
    """The catalog exactly as revision number recorded it (its entries), with its modes' source and timestamps."""
    modes, tools = rows_of(entries)
    return CatalogSnapshot(
        version=version, revision=number, modes=tuple(modes), declared_tools=tuple(tools), was_published=was_published
    )


def working_catalog() -> CatalogSnapshot:
    """The catalog as admins have left the rows, published or not: what the admin previews. Never cached."""
    modes, tools = tuple(AgentMode.objects.all()), tuple(DeclaredTool.objects.all())
    return CatalogSnapshot(version=None, revision=None, modes=modes, declared_tools=tools)


def read_state() -> CatalogState | None:
    # Fixed SQL: this runs on every request, and compiling the ORM query would cost more than the query itself.
    # The version row's columns but its id come in the model's order, CatalogState's.
    row = fixed_sql.fetch_one(fixed_sql.singleton_sql(CatalogVersion))
    return CatalogState(*row) if row else None


def catalog_at_revision(number: int) -> CatalogSnapshot:
    """The catalog exactly as revision number recorded it; UnknownRevisionError if there is no such revision."""
    published_at = list(CatalogRevision.objects.filter(number=number).values_list("published_at", flat=True))
    if not published_at:
        raise no_such_revision(number)
    return snapshot_of(number, entries_at(number), was_published=published_at[0] is not None)


def no_such_revision(number: int) -> UnknownRevisionError:
    """The error for a revision number that was never recorded, naming the ones that were."""
    state = read_state()
    return UnknownRevisionError(number, state and state.revision)


def mode_for_session(mode_key: str | None) -> AgentMode:
    """
    The published mode a session may be put in (mode_key, or the default mode): UnknownModeError for a key
    agents do not see, ModeBeingRemovedError for one whose row a change not yet published has deleted
    (sessions refer to rows). That takes a query only while the rows differ from the published revision.
    """
    current = _current()
    catalog, state = current.snapshot, current.state
    mode = catalog.mode(mode_key) if mode_key else catalog.default
    if state is None or (state.revision == state.published and not state.unrecorded):
        return mode
    kept = set(AgentMode.objects.filter(pk__in=catalog.by_id).values_list("pk", flat=True))
    if mode.pk not in kept:
        raise ModeBeingRemovedError(mode.key, [key for key, each in catalog.by_key.items() if each.pk in kept])
    return mode


def get_mode_by_id(mode_id: str) -> AgentMode:
    """
    The mode with this id (sessions store ids), as published; a mode that is not (a rollback removed it,
    or it was published after this request read the catalog) as its row; AgentMode.DoesNotExist if none.
    """
    return current_catalog().by_id.get(mode_id) or AgentMode.objects.get(pk=mode_id)


def get_tool(name: str) -> AgentTool | ClientTool:
    """
    The registered or declared tool of this name; UnknownToolError if there is none. A registered tool is found
    without reading the catalog, so that a tool that reads it meets a database failure itself.
    """
    if registry.has(name):
        return registry.get(name)
    try:
        return current_catalog().client_tools[name]
    except (KeyError, TypeError):
        raise UnknownToolError(name) from None


def mode_enables(mode: AgentMode, tool: AgentTool | ClientTool) -> bool:
    return tool.always_available or tool.name in mode.associated_tool_ids


# The catalog service of AGN-014 §5 (IAgentModeCatalogService), over the published catalog.


def get_all_modes() -> list[AgentModeSummary]:
    return [mode.create_summary() for mode in current_catalog().modes]


def build_system_prompt(current_mode_key: str | None) -> str:
    return current_catalog().system_prompt(current_mode_key)


def get_mode(mode_key: str) -> AgentMode:
    return current_catalog().mode(mode_key)


def get_tools_for_mode(mode_key: str) -> list[str]:
    """The tool names the mode enables, as a new list the caller may change."""
    return list(get_mode(mode_key).associated_tool_ids)
