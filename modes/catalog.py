"""
The catalog agents see (AGN-014 §5): the published revision, as one immutable Catalog per process.

Every write goes through modes.services, which records it as a numbered revision (modes.revisions); modes.releases
publishes one, and the head row (CatalogHead) then names it. While a rollout is in flight (modes.rollouts), the head
also names it, and its revision is served to the sessions of its cohort. published_release() reads the head (one
small query) and returns this process's Release: the control Catalog and the rollout's, each loaded again only when
another one is published. Each way of serving resolves it once per request, at its edge (request.release), takes the
catalog of the session it serves (Release.catalog_for) and hands it to the services, so that all a request is told
comes from one revision. catalog_at_revision() is any revision; working_catalog() the rows as admins left them (the
admin's previews). Lookups are by key (prompts and tools speak in keys); sessions store ids.
"""

import hashlib
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import cache
from typing import Protocol

from django.core.exceptions import ImproperlyConfigured
from django.db.models import QuerySet

from agent_tools.contract import AgentTool, ClientTool
from agent_tools.registry import UnknownToolError, registry
from aptix_site.service_errors import NotFound
from aptix_site.text import compact_json, whole_number

from .graph import ModeSwitchRefused, may_switch
from .listing import mode_list_payload
from .models import AgentMode, AgentModeSummary, CatalogHead, CatalogRevision, CatalogRollout, DeclaredTool
from .revision_store import entries_at, rows_of

# AGN-014 §6.2, word for word (note the typographic apostrophes).
MODE_CATALOG_BLOCK = """\
Current Mode: {current}

Available Modes:
{modes}

Mode Switching:
- If the user’s request clearly matches another mode’s "when to use" description, you may recommend switching.
- If the user expresses interest in switching, follow the instructions in the agent_change_mode tool.
- If you need more detail about modes, call the agent_list_modes tool."""


class UnknownModeError(NotFound, LookupError):
    """A mode key that is not in the catalog; the message lists the keys that are."""

    refusal = "Unknown mode key {key!r}."

    def __init__(self, key, valid_keys):
        # Cut as the MCP server cuts what it echoes: no key is that long, and an answer need not repeat a whole body.
        super().__init__(f"{self.refusal.format(key=key[:100])} Valid keys: {', '.join(valid_keys)}.")


class ModeBeingRemovedError(UnknownModeError):
    """A published mode whose row a change not published yet has deleted: no session can be put in it."""

    refusal = (
        "Mode {key!r} is being removed from the catalog (a change not yet published deletes it), so no session can "
        "enter it."
    )


class UnknownRevisionError(NotFound, LookupError):
    def __init__(self, number, latest):
        known = f"revisions run from 1 to {latest}" if latest else "none has been recorded yet"
        super().__init__(f"There is no catalog revision {number}; {known}.")


@dataclass(frozen=True)
class Catalog:
    """The catalog as one revision recorded it, or as the rows are. Its modes are shared: treat them as read-only."""

    revision: int | None  # None: the rows as admins left them (working_catalog)
    modes: tuple[AgentMode, ...]
    declared_tools: tuple[DeclaredTool, ...] = ()
    was_published: bool = True  # False for a revision that agents were never served (pending, unpublished)
    published_at: datetime | None = None  # for the published catalog: when it was published
    by_key: dict[str, AgentMode] = field(init=False)
    by_id: dict[str, AgentMode] = field(init=False)
    # The declared tools by name, less any that a registered server tool shadows (modes.W002) or whose
    # parameters no vendor would take (modes.W003): a mode that lists those finds them unresolved.
    client_tools: dict[str, ClientTool] = field(init=False)
    _memo: dict = field(init=False, default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        set_ = object.__setattr__  # frozen: derived fields are computed once, here
        set_(self, "by_key", {mode.key: mode for mode in self.modes})
        set_(self, "by_id", {mode.pk: mode for mode in self.modes})
        usable = [tool for tool in self.declared_tools if tool.is_usable()]
        set_(self, "client_tools", {tool.name: tool.as_client_tool() for tool in usable})

    def memoized(self, key, build):
        """build(), computed once for this catalog: for anything that depends only on the catalog."""
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    def exported_modes(self, *, custom_only: bool) -> list[AgentMode]:
        """The modes an export writes: all, or (custom_only) those admins added, as every deployment has the others."""
        return [mode for mode in self.modes if not custom_only or mode.source == AgentMode.Source.CUSTOM]

    def find(self, text: str = "") -> list[AgentMode]:
        """Modes whose key, display name, description or when-to-use contains text, ignoring case."""
        needle = text.strip().casefold()
        searched = lambda mode: (mode.key, mode.display_name, mode.description, mode.when_to_use)  # noqa: E731
        return [mode for mode in self.modes if any(needle in text.casefold() for text in searched(mode))]

    def listing(self, *, text: str = "", include_examples: bool = False) -> dict:
        """The agent_list_modes payload; the unfiltered one is built once per catalog."""
        build = lambda: mode_list_payload(  # noqa: E731
            self.find(text), include_examples=include_examples, catalog_revision=self.revision
        )
        return build() if text.strip() else self.memoized(("listing", include_examples), build)

    def listing_json(self, *, text: str = "", include_examples: bool = False) -> str:
        """listing() as JSON text, what agent_list_modes answers; the unfiltered one is built once per catalog."""
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
        modes = "\n".join(f"- {mode.key}: {mode.when_to_use}" for mode in self.modes)
        return MODE_CATALOG_BLOCK.format(current=current, modes=modes)

    def served(self, mode_id: str) -> AgentMode:
        """The mode of this id as this catalog has it, else the default (AGN-014 §6.3: a rollback may remove it)."""
        return self.by_id.get(mode_id) or self.default

    def tool(self, name: str) -> AgentTool | ClientTool:
        """The registered or declared tool of this name; UnknownToolError if there is none."""
        if registry.has(name):
            return registry.get(name)
        if name not in self.client_tools:
            raise UnknownToolError(name)
        return self.client_tools[name]

    def all_tools(self) -> list[AgentTool | ClientTool]:
        """Every tool a mode can enable, registered or declared, sorted by name."""
        tools = {**self.client_tools, **{tool.name: tool for tool in registry.tools()}}
        return [tools[name] for name in sorted(tools)]

    def tools_for_mode(self, mode: AgentMode) -> list[AgentTool | ClientTool]:
        """Sorted by name; always-available tools are always in."""
        return [tool for tool in self.all_tools() if mode_enables(mode, tool)]

    def unresolved_tool_ids(self, tool_ids) -> list[str]:
        """The ids among tool_ids that name no tool, registered or declared (modes.W001)."""
        return [name for name in tool_ids if not registry.has(name) and name not in self.client_tools]

    def switch_target_keys(self, mode: AgentMode) -> tuple[str, ...]:
        """What agent_change_mode's mode enum lists to a session in mode: catalog order, mode's own key included."""
        return tuple(target.key for target in self.modes if may_switch(mode, target))

    def switch_refusal(self, *, from_mode_id: str, target: AgentMode) -> ModeSwitchRefused | None:
        """Why a session in the mode of this id (or the default, as served) may not switch to target; None if it may."""
        source = self.served(from_mode_id)
        if may_switch(source, target):
            return None
        allowed = [key for key in self.switch_target_keys(source) if key != source.key]
        return ModeSwitchRefused(current=source.key, target=target.key, allowed=allowed)


BUCKETS = 10_000  # a rollout's share is of these: a percentage to two decimals


def bucket(*, salt: uuid.UUID, key: uuid.UUID) -> int:
    """Where a session falls among BUCKETS for one rollout: SHA-256 of its key's bytes, salted with the rollout's id."""
    return int.from_bytes(hashlib.sha256(salt.bytes + key.bytes).digest()[:8], "big") % BUCKETS


class ServedSession(Protocol):
    """What a rollout reads of a session (sessions_app.models.AgentSession): the key of its bucket, its organization."""

    cohort_key: uuid.UUID
    org_id: int | None


@dataclass(frozen=True)
class Rollout:
    """A rollout in flight (modes.rollouts): its revision's catalog, and which sessions it is served to."""

    id: uuid.UUID
    staged: Catalog
    share: Decimal
    organization_ids: frozenset[int]

    def includes(self, session: ServedSession) -> bool:
        """Whether session is in the cohort: its bucket is in the lowest share, or its organization is named."""
        if session.org_id is not None and session.org_id in self.organization_ids:
            return True
        return bucket(salt=self.id, key=session.cohort_key) < self.share * BUCKETS / 100


@dataclass(frozen=True)
class Release:
    """What agents are served: the published (control) catalog, and while a rollout is in flight, its own."""

    control: Catalog
    rollout: Rollout | None = None

    def catalog_for(self, session: ServedSession | None) -> Catalog:
        """The catalog a session is served, whole: its cohort's; the control catalog for what names no session."""
        if session is not None and self.rollout is not None and self.rollout.includes(session):
            return self.rollout.staged
        return self.control


_release: tuple[tuple, Release] | None = None  # this process's copy of what is published, with the head it was read at


@cache
def _head_query() -> QuerySet:
    """
    The query every served request makes, built once per process, as DRF's GenericAPIView keeps its queryset: each
    request runs a clone (.all()), so that it compiles the SQL but does not resolve the filter and the join again,
    which cost more than the query itself (benchmarks/RESULTS.md). Not first(): it would add an ORDER BY.
    """
    return CatalogHead.objects.filter(pk=1).values_list("published", "published_at", "rollout_id", "rollout__changed_at")


def published_release() -> Release:
    """
    What is published: one query reads the head row (and the rollout in flight's stamp, joined); the catalogs and the
    rollout are loaded again only when they are other ones, each catalog by itself.
    """
    global _release
    head = next(iter(_head_query().all()), (0, None, None, None))
    if not head[0]:
        return Release(working_catalog())  # nothing published yet (a database being migrated or flushed): the rows
    cached = _release  # read once: another thread may replace it between a check and a use
    if cached is not None and cached[0] == head:
        return cached[1]
    before = cached[1] if cached else None
    control = _reused(before and before.control, head[0], head[1]) or Catalog(
        head[0], *rows_of(entries_at(head[0])), published_at=head[1]
    )
    release = Release(control, _load_rollout(head[2], before and before.rollout))
    _release = head, release
    return release


def _reused(catalog: Catalog | None, revision: int, published_at) -> Catalog | None:
    """catalog if it is this revision as published then: its built answers stay."""
    return catalog if catalog is not None and (catalog.revision, catalog.published_at) == (revision, published_at) else None


def _load_rollout(rollout_id, before: Rollout | None) -> Rollout | None:
    if rollout_id is None:
        return None
    rollout = CatalogRollout.objects.get(pk=rollout_id)
    # Its catalog is kept while its share or organizations change; another rollout loads its own, as a revision's
    # number alone could name another catalog after a database is restored from a backup.
    staged = before.staged if before and before.id == rollout.pk else None
    return Rollout(
        id=rollout.pk,
        staged=staged or Catalog(rollout.revision_id, *rows_of(entries_at(rollout.revision_id))),
        share=rollout.share,
        organization_ids=frozenset(rollout.organizations.values_list("pk", flat=True)),
    )


def published_catalog() -> Catalog:
    """The published revision, as served to what names no session (and to every session while no rollout is in flight)."""
    return published_release().control


def catalog_at_revision(number: int) -> Catalog:
    """The catalog exactly as revision number recorded it; UnknownRevisionError if there is no such revision."""
    published_at = list(CatalogRevision.objects.filter(number=number).values_list("published_at", flat=True))
    if not published_at:
        raise no_such_revision(number)
    return Catalog(number, *rows_of(entries_at(number)), was_published=published_at[0] is not None)


def revision_number(text: str) -> int | None:
    """The revision number text writes in ASCII digits (1, 2, 3, ... below 2**31, an integer column's), else None."""
    return whole_number(text, at_most=2**31 - 1)


def no_such_revision(number: int) -> UnknownRevisionError:
    return UnknownRevisionError(number, CatalogHead.objects.filter(pk=1).values_list("latest", flat=True).first())


def working_catalog() -> Catalog:
    """The rows as admins have left them, published or not: what the admin previews."""
    return Catalog(None, tuple(AgentMode.objects.all()), tuple(DeclaredTool.objects.all()))


def mode_enables(mode: AgentMode, tool: AgentTool | ClientTool) -> bool:
    return tool.always_available or tool.name in mode.associated_tool_ids


# The catalog service of AGN-014 §5 (IAgentModeCatalogService), over the published catalog.


def get_all_modes() -> list[AgentModeSummary]:
    return [mode.create_summary() for mode in published_catalog().modes]


def build_system_prompt(current_mode_key: str | None) -> str:
    return published_catalog().system_prompt(current_mode_key)


def get_mode(mode_key: str) -> AgentMode:
    return published_catalog().mode(mode_key)


def get_tools_for_mode(mode_key: str) -> list[str]:
    """The tool names the mode enables, as a new list the caller may change."""
    return list(get_mode(mode_key).associated_tool_ids)
