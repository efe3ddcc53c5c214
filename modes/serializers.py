"""
Request shapes of the mode endpoints, and the shapes of the revision endpoints' answers. The catalog's own
answers (the listing, a mode's detail) are shaped in modes.listing, which agent_list_modes and MCP share.
"""

from decimal import Decimal

from django.core.validators import ProhibitNullCharactersValidator, RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from aptix_site.api import (
    RequestSerializer, RevisionNumberField, StrictBooleanField, StrictCharField, StrictDecimalField, StrictSerializer,
    WholeNumberField,
)
from aptix_site.shapes import ModelShape, Shape

from .coding_agents.base import APPROXIMATED, CARRIED, DROPPED
from .coding_agents.formats import FORMATS as AGENT_FORMATS
from .listing import string_list
from .models import CatalogRevision, CatalogRollout
from .releases import DIFF_WARNING_CODES, ReleaseStatus, revision_status
from .rollouts import Guard, Staging
from .tools import FILTER_MAX_LENGTH
from .validators import one_of


class QueryBooleanField(serializers.BooleanField):
    """A boolean query parameter: true or false, or left out for false."""

    default_error_messages = {"invalid": "Must be true or false; leave the parameter out for false."}


class ModeListQuery(RequestSerializer):
    filter = StrictCharField(
        allow_blank=True, max_length=FILTER_MAX_LENGTH, default="",
        help_text="Only modes whose key, name, description or when-to-use contains this text (any case).",
    )
    includeExamples = QueryBooleanField(default=False, help_text="Include each mode's example utterances.")


class SystemPromptQuery(RequestSerializer):
    currentMode = StrictCharField(
        allow_blank=True, max_length=64, default="",
        help_text="Key of the current mode; empty or unknown means the default mode.",
    )


class ApprovalResponse(serializers.Serializer):
    user = serializers.CharField(source="user.get_username")
    at = serializers.DateTimeField()


class CatalogRevisionSummary(ModelShape):
    """A revision and its release; the serializer's context holds the catalog's "head" (its head row)."""

    revision = serializers.IntegerField(source="number")
    created_at = serializers.DateTimeField()
    created_by = serializers.CharField(source="created_by.get_username", allow_null=True, default=None)
    status = serializers.SerializerMethodField(help_text=f"{one_of(ReleaseStatus.values)}.")
    approvals = ApprovalResponse(many=True, read_only=True)
    published_at = serializers.DateTimeField(allow_null=True)
    published_by = serializers.CharField(source="published_by.get_username", allow_null=True, default=None)
    unreviewed = serializers.BooleanField(help_text="Published with fewer approvals than the policy asks.")

    class Meta:
        model = CatalogRevision
        fields = [
            "revision", "created_at", "created_by", "summary", "status", "approvals", "published_at", "published_by",
            "unreviewed",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.ChoiceField(choices=ReleaseStatus.values))
    def get_status(self, revision) -> str:
        return revision_status(revision, self.context["head"])


DIFF_PAGE, MAX_DIFF_PAGE = 100, 500
MAX_ROLLOUT_ORGANIZATIONS, MAX_GUARD_SESSIONS = 100, 1_000_000


class RevisionDiffQuery(RequestSerializer):
    against = RevisionNumberField(
        default=None, help_text="The revision to compare with; the published one if left out."
    )
    after = StrictCharField(default=None, max_length=64, help_text="The modes after this key: the next link's value.")
    pageSize = WholeNumberField(
        max_value=MAX_DIFF_PAGE, default=DIFF_PAGE, help_text=f"Modes per page, 1 to {MAX_DIFF_PAGE}."
    )


class FieldChange(serializers.Serializer):
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)


class ToolChanges(serializers.Serializer):
    added = string_list()
    removed = string_list()


class DiffWarning(serializers.Serializer):
    code = serializers.ChoiceField(choices=DIFF_WARNING_CODES)
    message = serializers.CharField()


class ModeDiffResponse(serializers.Serializer):
    key = serializers.CharField()
    change = serializers.ChoiceField(choices=["added", "removed", "changed", "unchanged"])
    fields = serializers.DictField(child=FieldChange())
    prompt = string_list(help_text="The block's lines that are this mode's own (its Current Mode and its when-to-use "
                         "lines), as unified-diff lines.")
    tools = ToolChanges()
    warnings = DiffWarning(
        many=True, help_text="What a reviewer should not miss: entryConfirmationNone, a mode whose entry_confirmation "
        "becomes none (added so, or changed to it), which the model then enters without asking the user."
    )


class DeclaredToolDiffResponse(serializers.Serializer):
    name = serializers.CharField()
    change = serializers.ChoiceField(choices=["added", "removed", "changed", "unchanged"])
    fields = serializers.DictField(child=FieldChange(), help_text="Its description and parameters among them.")


class RevisionDiffResponse(Shape):
    revision = serializers.IntegerField()
    against = serializers.IntegerField()
    prompt = string_list(help_text="The Mode Catalog block as a session in the default mode gets it, as unified-diff "
                         "lines: once, as it is the same for every mode but their own lines.")
    modes = ModeDiffResponse(many=True, help_text="One page of them, in catalog order.")
    next = serializers.URLField(allow_null=True, help_text="The next page of modes; null on the last.")
    declared_tools = DeclaredToolDiffResponse(many=True)


class ModeToolsResponse(serializers.Serializer):
    mode = serializers.CharField()
    tools = string_list()


class AgentFileShape(StrictSerializer):
    """A file exported, or sent to import: text, never a number read as text, and no other field."""

    path = StrictCharField(max_length=1000, help_text="Relative to the repository's folder, with '/'.")
    content = StrictCharField(allow_blank=True, trim_whitespace=False, help_text="The file's text.")


class CatalogImportRequest(StrictSerializer):
    files = serializers.ListField(
        child=AgentFileShape(), min_length=1, max_length=10_000,
        help_text="A repository's mode files; each one's format is known by its path, or as format says.",
    )
    format = serializers.ChoiceField(
        choices=list(AGENT_FORMATS), required=False, default=None, help_text="Read every file as this agent's."
    )
    dryRun = StrictBooleanField(default=False, help_text="Plan and report; change nothing.")
    update = StrictBooleanField(default=False, help_text="Update modes whose key exists already.")


class FidelityShape(Shape):
    path = serializers.CharField(help_text="The file read or written.")
    mode = serializers.CharField(help_text="The mode's key in the catalog.")
    field = serializers.CharField(help_text="The field, named as the side it comes from names it.")
    fate = serializers.ChoiceField(choices=[CARRIED, APPROXIMATED, DROPPED])
    how = serializers.CharField(allow_blank=True, help_text="For approximated and dropped: what was done.")


class PlannedEntryShape(Shape):
    kind = serializers.CharField()
    name = serializers.CharField()
    action = serializers.ChoiceField(choices=["created", "updated", "unchanged"])
    fields = string_list(help_text="For updated: the fields that change.")


class CatalogImportResponse(Shape):
    entries = PlannedEntryShape(many=True, source="result.entries")
    default = serializers.CharField(
        source="result.default", allow_null=True, help_text="The mode that became the default, if one did."
    )
    revision = serializers.IntegerField(
        source="result.revision", allow_null=True, help_text="The catalog revision the import made; null for a dry run."
    )
    unresolved_tool_ids = serializers.DictField(
        child=string_list(), source="result.unresolved_tool_ids",
        help_text="Per mode key, the tool ids it lists that name no tool (modes.W001): warnings.",
    )
    report = FidelityShape(many=True)
    skipped = string_list(help_text="The files given that no coding agent keeps modes in, by their paths: not read.")


class CatalogExportQuery(RequestSerializer):
    format = serializers.ChoiceField(choices=list(AGENT_FORMATS), help_text="The coding agent whose files to write.")
    customOnly = QueryBooleanField(default=False, help_text="Leave out the built-in modes, as --custom-only does.")


class CatalogExportResponse(Shape):
    files = AgentFileShape(many=True)
    report = FidelityShape(many=True)


class GuardRequest(StrictSerializer):
    metric = serializers.ChoiceField(
        choices=CatalogRollout.Metric.values,
        help_text="declined: proposals the user declined per session; refused: switches the mode graph refused per "
        "session.",
    )
    ratio = StrictDecimalField(
        max_digits=6, decimal_places=2, min_value=Decimal("0.01"), coerce_to_string=False,  # a number in the schema
        help_text="Abort when the cohort's metric is more than this many times the control's.",
    )
    minSessions = WholeNumberField(
        max_value=MAX_GUARD_SESSIONS, help_text="How many of the cohort's sessions must have acted first."
    )


class PublishRequest(StrictSerializer):
    share = StrictDecimalField(
        max_digits=5, decimal_places=2, min_value=0, max_value=100, required=False, coerce_to_string=False,
        help_text="Stage the publication: the percentage of sessions (to two decimals) served this revision, chosen "
        "by their bucket; the rest keep the published revision. For the revision being rolled out: its new share, "
        "never lower (left out: unchanged).",
    )
    organizations = serializers.ListField(
        child=StrictCharField(max_length=50), required=False, max_length=MAX_ROLLOUT_ORGANIZATIONS,
        help_text="Stage the publication to the sessions of these organizations (by slug) too.",
    )
    guard = GuardRequest(required=False, help_text="Abort the rollout by itself when its cohort fares this badly.")
    restart = StrictBooleanField(
        required=False, help_text="Roll out again a revision whose rollout was aborted; without it, that is a 409 (a "
        "request to raise the aborted rollout's share, made too late, restarts nothing).",
    )

    @classmethod
    def staging(cls, data) -> Staging | None:
        """The staged publication the body asks for, or None for a publication to everyone."""
        body = cls.validated(data)
        if not body:
            return None
        guard = body.get("guard")
        return Staging(
            share=body.get("share"),
            organizations=tuple(body.get("organizations", ())),
            guard=guard and Guard(metric=guard["metric"], ratio=guard["ratio"], min_sessions=guard["minSessions"]),
            restart=body.get("restart", False),
        )


class PromoteRequest(StrictSerializer):
    revision = RevisionNumberField(
        required=False, default=None,
        help_text="The revision being rolled out, as the caller saw it: 409 if another one is, so that a stale view "
        "ends no other rollout.",
    )


# No control character (Unicode's Cc, line feeds among them) nor either line break that is not one, as a pattern, so
# that the published schema states the rule (drf-spectacular writes \A and \Z as ECMA's ^ and $, and adds the blank
# text as a branch of its own). Judged as sent, as the schema judges it, and trimmed only then.
ONE_PLAIN_LINE = RegexValidator(
    r"\A[^\x00-\x1f\x7f-\x9f\u2028\u2029]+\Z", "One line, without control characters: messages quote it."
)


class OnePlainLineField(StrictCharField):
    """
    Text judged by ONE_PLAIN_LINE as sent. DRF's CharField adds a NUL check of its own, which the pattern makes
    already: a NUL was refused twice, in two messages (the page showed both), so the pattern's is the one kept.
    """

    def __init__(self, **kwargs):
        super().__init__(trim_whitespace=False, validators=[ONE_PLAIN_LINE], **kwargs)
        self.validators = [
            validator for validator in self.validators if not isinstance(validator, ProhibitNullCharactersValidator)
        ]


class AbortRequest(PromoteRequest):
    reason = OnePlainLineField(
        max_length=1000, required=False, default="", allow_blank=True,
        help_text="Why, as the rollout records it: one line, without control characters (messages quote it).",
    )

    def validate_reason(self, value):
        return value.strip()  # spaces alone are no reason


class RolloutGuardResponse(Shape):
    metric = serializers.CharField(source="guard_metric")
    ratio = serializers.DecimalField(source="guard_ratio", max_digits=6, decimal_places=2, coerce_to_string=False)
    min_sessions = serializers.IntegerField(source="guard_min_sessions")


class RolloutResponse(ModelShape):
    """A rollout: what it serves to whom, how it ended, its guard."""

    revision = serializers.IntegerField(source="revision_id")
    control = serializers.IntegerField(source="control_id", help_text="The revision every other session keeps.")
    share = serializers.DecimalField(max_digits=5, decimal_places=2, coerce_to_string=False)
    organizations = serializers.SlugRelatedField(slug_field="slug", many=True, read_only=True)
    started_by = serializers.CharField(source="started_by.get_username", allow_null=True, default=None)
    ended_by = serializers.CharField(
        source="ended_by.get_username", allow_null=True, default=None, help_text="Empty for an abort by the guard."
    )
    guard = serializers.SerializerMethodField()

    class Meta:
        model = CatalogRollout
        fields = [
            "revision", "control", "share", "organizations", "state", "started_at", "started_by", "ended_at",
            "ended_by", "end_reason", "guard",
        ]
        read_only_fields = fields

    @extend_schema_field(RolloutGuardResponse(allow_null=True))
    def get_guard(self, rollout) -> dict | None:
        return RolloutGuardResponse(rollout).data if rollout.guard_metric else None
