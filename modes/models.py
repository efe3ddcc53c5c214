"""The mode catalog: one row per agent mode (AGN-014 §3), with the invariants of §7 as constraints."""

import uuid
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, ProhibitNullCharactersValidator
from django.db import models
from django.db.models import Max, Q

from agent_tools.contract import TOOL_NAME_PATTERN, ClientTool
from agent_tools.registry import registry

from .fields import StringListField
from .validators import (
    MODE_ID_PATTERN, MODE_KEY_PATTERN, WHEN_TO_USE_PATTERN, empty_parameters, new_mode_id, one_of,
    tool_parameters_problem, validate_mode_id, validate_mode_key, validate_mode_keys, validate_not_blank,
    validate_single_line, validate_tool_name, validate_tool_names, validate_tool_parameters
)


@dataclass(frozen=True)
class AgentModeSummary:
    """The lightweight projection of a mode used by listings and tools (AGN-014 §4)."""

    id: str
    key: str
    display_name: str
    description: str
    system_prompt_summary: str
    is_default: bool
    human_role_hints: tuple[str, ...]
    example_utterances: tuple[str, ...]
    # Beyond §4: listings show where a mode came from and its lifecycle status.
    source: str
    status: str
    # The mode graph (issue 29): the keys this mode may switch to (empty: any), and whether the model may enter it.
    switch_targets: tuple[str, ...]
    llm_can_enter: bool


def regex_check(field: str, pattern: str, name: str, message: str) -> models.CheckConstraint:
    """The database's check that field matches pattern, which the field's validator also checks in Python."""
    condition = Q(**{f"{field}__regex": pattern})
    return models.CheckConstraint(condition=condition, name=name, violation_error_message=message)


class ModeStatus(models.TextChoices):  # AgentMode.Status; a class of its own so that Meta can name it
    ACTIVE = "active"
    EXPERIMENTAL = "experimental"
    DEPRECATED = "deprecated"


class EntryConfirmation(models.TextChoices):  # AgentMode.EntryConfirmation; a class of its own, as ModeStatus is
    INHERIT = "inherit", "As MODE_CHANGE_CONFIRMATION says"
    USER = "user", "The user confirms"
    NONE = "none", "No confirmation"


MAX_POSITION = 1_000_000  # far from an integer column's end, so that "last" always has a next position
ROUTING_STAY = "stay"  # a routing case's expected outcome when the model should propose no mode: no mode's key


class AgentMode(models.Model):
    Status = ModeStatus
    EntryConfirmation = EntryConfirmation

    class Source(models.TextChoices):
        BUILTIN = "builtin", "Built-in"
        CUSTOM = "custom", "Custom"

    id = models.CharField(
        primary_key=True, max_length=32, default=new_mode_id, validators=[validate_mode_id],
        help_text="A GUID without hyphens, upper-case. Sessions store this id; it never changes.",
    )
    key = models.CharField(
        max_length=64, unique=True, validators=[validate_mode_key],
        error_messages={"unique": "A mode with this key already exists."},
        help_text="The snake_case name prompts and tools use, for example ddr_authoring.",
    )
    display_name = models.CharField(max_length=100)
    description = models.TextField(
        blank=True, help_text="What the mode covers. Listings fall back to when-to-use if empty."
    )
    when_to_use = models.CharField(
        max_length=300, validators=[validate_not_blank, validate_single_line],
        help_text="One sentence, rendered in the system prompt as '- key: sentence'.",
    )
    is_default = models.BooleanField(
        default=False, help_text="Exactly one mode is the default. Change it with the 'Make default' action."
    )
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.ACTIVE,
        error_messages={"invalid_choice": f"Status %(value)r is not one of {one_of(Status.values)}."},
    )
    version = models.CharField(max_length=32, default="v1")
    prompt = models.TextField(
        blank=True, validators=[ProhibitNullCharactersValidator()],
        help_text="What the model is told while this mode is active, before the instruction lines: Markdown of any "
        "length, such as a coding agent's role definition or agent prompt, kept as written.",
    )
    mode_instructions = StringListField()
    behavior_hints = StringListField()
    human_role_hints = StringListField()
    example_utterances = StringListField()
    associated_tool_ids = StringListField(
        validators=[validate_tool_names],
        help_text="Names of the tools enabled while this mode is active, one per line.",
    )
    custom_instructions = models.TextField(
        blank=True, validators=[ProhibitNullCharactersValidator()],
        help_text="Told after the instruction lines: Markdown of any length, such as Roo Code's custom instructions "
        "and rules.",
    )
    tool_group_hints = StringListField()
    rag_scope_hints = StringListField()
    strong_signals = StringListField()
    weak_signals = StringListField()
    switch_targets = StringListField(
        validators=[validate_mode_keys],
        help_text="Keys of the modes the model may switch to from this one, one per line; empty: any mode.",
    )
    llm_can_enter = models.BooleanField(
        default=True,
        help_text="Whether the model may switch into this mode (agent_change_mode). Off: only an application "
        "starts a session in it (POST /api/sessions/ with this mode).",
    )
    entry_confirmation = models.CharField(
        max_length=16, choices=EntryConfirmation.choices, default=EntryConfirmation.INHERIT.value,
        error_messages={
            "invalid_choice": f"Entry confirmation %(value)r is not one of {one_of(EntryConfirmation.values)}."
        },
        help_text="Who confirms a switch into this mode: as the MODE_CHANGE_CONFIRMATION setting says (inherit), "
        "always the user, or nobody (a harmless mode that needs no question).",
    )
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.CUSTOM)
    position = models.PositiveIntegerField(
        blank=True, validators=[MaxValueValidator(MAX_POSITION)],
        help_text=f"Catalog order, lowest first, up to {MAX_POSITION:,}. Left empty, the mode goes last.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "key"]
        constraints = [
            models.UniqueConstraint(
                fields=["is_default"], condition=Q(is_default=True), name="modes_agentmode_single_default",
                violation_error_message="Another mode is already the default; only one mode can be the default.",
            ),
            models.CheckConstraint(
                condition=Q(status__in=ModeStatus.values), name="modes_agentmode_status_valid",
                violation_error_message=f"Status must be {one_of(ModeStatus.values)}.",
            ),
            models.CheckConstraint(
                condition=Q(entry_confirmation__in=EntryConfirmation.values),
                name="modes_agentmode_entry_confirmation_valid",
                violation_error_message=f"Entry confirmation must be {one_of(EntryConfirmation.values)}.",
            ),
            regex_check("id", MODE_ID_PATTERN, "modes_agentmode_id_format", validate_mode_id.message),
            regex_check("key", MODE_KEY_PATTERN, "modes_agentmode_key_format", validate_mode_key.message),
            regex_check(
                "when_to_use", WHEN_TO_USE_PATTERN, "modes_agentmode_when_to_use_one_line",
                "Every mode needs a when-to-use sentence on a single line.",
            ),
        ]

    def __str__(self):
        return self.key

    def clean(self):
        if self.key == ROUTING_STAY:
            raise ValidationError({"key": f"{ROUTING_STAY!r} is what a routing case expects when no mode should be "
                                          "proposed, so no mode can have it as its key."})

    def save(self, *args, **kwargs):
        if self.position is None:
            self.position = AgentMode.position_after(AgentMode.objects.aggregate(last=Max("position"))["last"])
        super().save(*args, **kwargs)

    @staticmethod
    def position_after(last: int | None) -> int:
        """The position of a mode placed last, after last (None: no mode has one): at the end of the range, beside
        the last (then in order of key)."""
        return min((last or 0) + 1, MAX_POSITION)

    @classmethod
    def list_field_names(cls) -> list[str]:
        return [field.name for field in cls._meta.fields if isinstance(field, StringListField)]

    def instructions(self) -> str:
        """What the model is told while this mode is active, beside the Mode Catalog block (AGN-014 §6.1), in the
        mode's order: its prompt, its instruction lines (ModeInstructions, §3), its custom instructions."""
        parts = (self.prompt.strip(), "\n".join(self.mode_instructions), self.custom_instructions.strip())
        return "\n\n".join(part for part in parts if part)

    def create_summary(self) -> AgentModeSummary:
        return AgentModeSummary(
            id=self.id, key=self.key, display_name=self.display_name, description=self.description or self.when_to_use,
            system_prompt_summary=self.when_to_use, is_default=self.is_default,
            human_role_hints=tuple(self.human_role_hints), example_utterances=tuple(self.example_utterances),
            source=self.source, status=self.status,
            switch_targets=tuple(self.switch_targets), llm_can_enter=self.llm_can_enter,
        )


class DeclaredTool(models.Model):
    """A tool that the agent's client executes (TUL-011), declared so that modes can enable it like a server tool."""

    name = models.CharField(
        max_length=64, unique=True, validators=[validate_tool_name],
        error_messages={"unique": "A tool with this name is already declared."},
        help_text="The name modes list in their tool ids and the model calls, for example agent_ddr_manager.",
    )
    description = models.TextField(
        validators=[validate_not_blank], help_text="What the tool does, for the model: one or two sentences."
    )
    parameters = models.JSONField(
        default=empty_parameters, validators=[validate_tool_parameters],
        help_text='A JSON Schema of type "object" for the arguments: every property with a "type" and a '
        '"description", the ones that must be given listed in "required".',
    )
    read_only = models.BooleanField(
        default=False, help_text="The tool only reads: MCP clients are told so (readOnlyHint)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            regex_check("name", TOOL_NAME_PATTERN, "modes_declaredtool_name_format", validate_tool_name.message),
        ]

    def __str__(self):
        return self.name

    def clean(self):
        if registry.has(self.name):
            raise ValidationError(
                {"name": f"{self.name!r} is a server tool registered in code; a declaration cannot shadow it."}
            )

    def is_usable(self) -> bool:
        """Whether the model may be told of this tool: no server tool has its name, and its schema is sound."""
        return not registry.has(self.name) and tool_parameters_problem(self.parameters) is None

    def as_client_tool(self) -> ClientTool:
        return ClientTool(
            name=self.name, description=self.description, parameters=self.parameters, read_only=self.read_only
        )


class CatalogHead(models.Model):
    """One row: the newest and the published revision; every write locks it, so revisions get consecutive numbers."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1, editable=False)
    latest = models.PositiveIntegerField(default=0, help_text="The newest revision; 0: none yet.")
    published = models.PositiveIntegerField(default=0, help_text="The revision agents are served; 0: none yet.")
    # With the number, what each process's copy of the published catalog is keyed by: a number alone could name
    # another catalog after a database is restored from a backup.
    published_at = models.DateTimeField(null=True, blank=True)
    # While a rollout is in flight: it serves its revision to a share of the sessions (modes.rollouts).
    rollout = models.ForeignKey("CatalogRollout", null=True, blank=True, on_delete=models.PROTECT, related_name="+")

    def __str__(self):
        return f"Catalog at revision {self.latest}, revision {self.published} published"

    @classmethod
    def locked(cls) -> "CatalogHead":
        """The row, locked until the transaction ends: the catalog's one lock, on which its writes, its releases and
        the routing cases' bound queue."""
        return cls.objects.select_for_update().get(pk=1)


class CatalogRevision(models.Model):
    """The catalog as one change left it, stored as that change (CatalogRevisionEntry); later, only published."""

    number = models.PositiveIntegerField(primary_key=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    summary = models.TextField(help_text="The modes and fields that changed since the revision before.")
    published_at = models.DateTimeField(null=True, blank=True, help_text="When it was last published.")
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    unreviewed = models.BooleanField(default=False, help_text="Published with fewer approvals than the policy asks.")
    restores = models.PositiveIntegerField(
        null=True, blank=True, help_text="For a rollback: the earlier revision whose catalog this one restores."
    )

    class Meta:
        ordering = ["-number"]
        permissions = [
            ("approve_revision", "Can approve catalog revisions of others"),
            ("publish_revision", "Can publish or roll back catalog revisions"),
            ("publish_unreviewed_revision", "Can publish catalog revisions unreviewed"),
            ("publish_failing_revision", "Can publish revisions failing the routing gate"),
        ]

    def __str__(self):
        return f"Catalog revision {self.number}"

    @property
    def catalog(self) -> dict:
        """As export_modes writes it."""
        from .revision_store import document_of, entries_at  # they build on the portable format, which builds on this

        return document_of(entries_at(self.number))


class CatalogRevisionEntry(models.Model):
    """One mode or declared tool as a revision added, changed or removed it (modes.revision_store)."""

    class Kind(models.TextChoices):
        MODE = "mode"
        TOOL = "tool"

    revision = models.ForeignKey(CatalogRevision, on_delete=models.CASCADE, related_name="entries")
    kind = models.CharField(max_length=4, choices=Kind.choices)
    identity = models.CharField(max_length=64, help_text="A mode's id (its key may change), a tool's name.")
    # The catalog's order (AgentMode's and DeclaredTool's ordering), sorted by the database as the rows are.
    position = models.PositiveIntegerField(null=True, blank=True)
    name = models.CharField(max_length=64, blank=True, help_text="A mode's key, a tool's name.")
    content = models.JSONField(null=True, blank=True, help_text="As export_modes writes it; empty: removed.")
    # What the portable format leaves out and agents are shown of a mode: its source and timestamps.
    stamp = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [
            # Also the index that finds a mode's or tool's newest entry at or before a revision.
            models.UniqueConstraint(fields=["kind", "identity", "revision"], name="modes_revisionentry_once"),
        ]
        indexes = [
            # The removals, which the admin's lists show as deleted rows: few among all the entries.
            models.Index(fields=["kind", "revision"], condition=Q(content__isnull=True), name="modes_revisionentry_removed"),
        ]

    def __str__(self):
        return f"{self.kind} {self.name or self.identity} in revision {self.revision_id}"


class CatalogApproval(models.Model):
    """One staff user's approval of one exact revision; a newer revision needs its own."""

    revision = models.ForeignKey(CatalogRevision, on_delete=models.CASCADE, related_name="approvals")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "id"]
        constraints = [models.UniqueConstraint(fields=["revision", "user"], name="modes_catalogapproval_once_per_user")]

    def __str__(self):
        return f"{self.user} approved revision {self.revision_id}"


class ArchivedHistory(models.Model):
    """A state that the retired per-row history kept and no revision holds, carried over by migration 0011."""

    kind = models.CharField(max_length=4, choices=CatalogRevisionEntry.Kind.choices)
    identity = models.CharField(max_length=64, help_text="A mode's id, a tool's name.")
    name = models.CharField(max_length=64, help_text="A mode's key, a tool's name.")
    change = models.CharField(max_length=8, help_text="created, changed or deleted.")
    content = models.JSONField(help_text="The fields as the record kept them.")
    changed_at = models.DateTimeField()
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-changed_at", "-id"]
        verbose_name_plural = "archived history"

    def __str__(self):
        return f"{self.kind} {self.name} {self.change} at {self.changed_at:%Y-%m-%d %H:%M}"



class RoutingCase(models.Model):
    """An utterance and where the model should route it (modes.routing): the evaluations' test set, not the catalog's."""

    utterance = models.CharField(
        max_length=1000, validators=[validate_not_blank, ProhibitNullCharactersValidator()],
        help_text="What the user says, as one message.",
    )
    current_mode = models.CharField(
        max_length=64, blank=True, validators=[validate_mode_key],
        help_text="Key of the mode the session is in when it arrives; empty: the default mode.",
    )
    expected = models.CharField(
        max_length=64, validators=[validate_mode_key],
        help_text=f"Key of the mode the model should propose, or {ROUTING_STAY} for none.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["utterance", "current_mode"], name="modes_routingcase_once",
                violation_error_message="A case with this utterance from this mode exists already.",
            ),
        ]

    def __str__(self):
        return f"{self.utterance[:60]} -> {self.expected}"


class RoutingEvaluation(models.Model):
    """How one scorer routed the cases with one revision's catalog (modes.routing.evaluation)."""

    revision = models.ForeignKey(CatalogRevision, on_delete=models.CASCADE, related_name="evaluations")
    scorer = models.CharField(max_length=16)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    result = models.JSONField(help_text="Accuracy, per-mode precision and recall, confusion, failures, violations.")
    # Every case's outcome, [utterance, current mode, expected, predicted, passed]: what another revision's moves, and
    # the drop on the cases both scored, are read from.
    outcomes = models.JSONField()
    # Of the stored cases it scored: the gate takes no evaluation made on other cases than there are now.
    cases_digest = models.CharField(max_length=64)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["revision", "scorer", "-id"], name="modes_evaluation_latest")]

    def __str__(self):
        return f"{self.scorer} evaluation of revision {self.revision_id}"


class CatalogRollout(models.Model):
    """
    A staged publication (modes.rollouts): its revision is served to a share of the sessions and to the sessions of
    some organizations, every other session keeps the control revision, until it is promoted or aborted.
    """

    class State(models.TextChoices):
        IN_FLIGHT = "in_flight", "in flight"
        PROMOTED = "promoted"
        ABORTED = "aborted"

    class Metric(models.TextChoices):
        """What a guard compares, per session of each cohort (sessions_app.rollout_cohorts)."""

        DECLINED = "declined", "proposals the user declined per session"
        REFUSED = "refused", "switches the mode graph refused per session"

    # Also the salt of the sessions' buckets: each rollout draws its share anew.
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    revision = models.ForeignKey(CatalogRevision, on_delete=models.PROTECT, related_name="rollouts")
    control = models.ForeignKey(
        CatalogRevision, on_delete=models.PROTECT, related_name="+", help_text="The revision every other session keeps."
    )
    share = models.DecimalField(
        max_digits=5, decimal_places=2, help_text="The percentage of sessions served the revision, by their bucket."
    )
    organizations = models.ManyToManyField(
        "accounts.Organization", blank=True, related_name="+", through="RolloutOrganization"
    )
    state = models.CharField(max_length=9, choices=State.choices, default=State.IN_FLIGHT)
    unreviewed = models.BooleanField(default=False, help_text="Staged with fewer approvals than the policy asks.")
    started_at = models.DateTimeField(auto_now_add=True)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # When its share or organizations last changed: what each process's copy of it is keyed by.
    changed_at = models.DateTimeField(auto_now=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    # Protected: empty means the guard ended it, which a deleted user's abort would read as.
    ended_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="Empty for an abort by the guard.",
    )
    end_reason = models.TextField(blank=True)
    guard_metric = models.CharField(
        max_length=8, choices=Metric.choices, blank=True, help_text="Empty: no guard."
    )
    guard_ratio = models.DecimalField(
        max_digits=6, decimal_places=2, null=True, blank=True,
        help_text="The guard aborts when the cohort's metric is more than this many times the control's.",
    )
    guard_min_sessions = models.PositiveIntegerField(
        null=True, blank=True, help_text="The cohort's sessions before the guard judges."
    )
    guard_checked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["state"], condition=Q(state="in_flight"), name="modes_rollout_one_in_flight",
                violation_error_message="Another rollout is in flight.",
            ),
            models.CheckConstraint(condition=Q(share__gte=0, share__lte=100), name="modes_rollout_share_percent"),
            models.CheckConstraint(
                condition=Q(guard_metric="") | Q(guard_ratio__gt=0, guard_min_sessions__gte=1),
                name="modes_rollout_guard_complete",
            ),
        ]

    def __str__(self):
        return f"Rollout of revision {self.revision_id} ({self.get_state_display()})"


class RolloutOrganization(models.Model):
    """An organization a rollout names. It protects it: deleting it would narrow a rollout in flight without the
    publish permission, and erase whom an ended one served."""

    catalogrollout = models.ForeignKey(CatalogRollout, on_delete=models.CASCADE)
    organization = models.ForeignKey("accounts.Organization", on_delete=models.PROTECT, related_name="+")

    class Meta:
        db_table = "modes_catalogrollout_organizations"  # the table the field had without this model (migration 0019)
        unique_together = [("catalogrollout", "organization")]

    def __str__(self):
        return f"{self.catalogrollout}, to {self.organization}"
