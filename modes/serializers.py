"""
Request and response shapes of the mode endpoints. The payloads themselves are
built by modes.listing, shared with agent_list_modes; these describe them in the
OpenAPI schema, and the schema tests check the two agree.
"""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from aptix_site.api import PresentIfEmpty, RequestSerializer, StrictCharField

from .models import AgentMode, CatalogRevision
from .releases import ReleaseStatus, revision_status
from .tools import FILTER_MAX_LENGTH
from .validators import one_of


class QueryBooleanField(PresentIfEmpty, serializers.BooleanField):
    """A boolean query parameter; present but empty is an error, not the same as absent."""

    default_error_messages = {"invalid": "Must be true or false; leave the parameter out for false."}


class ModeListQuery(RequestSerializer):
    filter = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=FILTER_MAX_LENGTH,
        default="",
        help_text="Only modes whose key, name, description or when-to-use contains this text (any case).",
    )
    includeExamples = QueryBooleanField(
        required=False, default=False, help_text="Include each mode's example utterances."
    )


class SystemPromptQuery(RequestSerializer):
    currentMode = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=64,
        default="",
        help_text="Key of the current mode; empty or unknown means the default mode.",
    )


def _strings():
    return serializers.ListField(child=serializers.CharField())


def _switch_targets():
    return serializers.ListField(
        child=serializers.CharField(), help_text="Keys of the modes the model may switch to from this one; empty: any."
    )


def _llm_can_enter():
    return serializers.BooleanField(help_text="Whether agent_change_mode may switch into this mode.")


class ModeSummaryResponse(serializers.Serializer):
    id = serializers.CharField()
    key = serializers.CharField()
    displayName = serializers.CharField()
    description = serializers.CharField()
    systemPromptSummary = serializers.CharField()
    isDefault = serializers.BooleanField()
    humanRoleHints = _strings()
    exampleUtterances = _strings()
    source = serializers.ChoiceField(choices=AgentMode.Source.values)
    status = serializers.ChoiceField(choices=AgentMode.Status.values)
    switchTargets = _switch_targets()
    llmCanEnter = _llm_can_enter()


class ModeListResponse(serializers.Serializer):
    modes = ModeSummaryResponse(many=True)
    catalogRevision = serializers.IntegerField(help_text="The catalog revision this listing shows.")


class ApprovalResponse(serializers.Serializer):
    user = serializers.CharField(source="user.get_username")
    at = serializers.DateTimeField()


class CatalogRevisionSummary(serializers.ModelSerializer):
    """A revision and its release; the serializer's context holds the catalog's "state" (its version row)."""

    revision = serializers.IntegerField(source="number")
    createdAt = serializers.DateTimeField(source="created_at")
    createdBy = serializers.CharField(source="created_by.get_username", allow_null=True, default=None)
    status = serializers.SerializerMethodField(help_text=f"{one_of(ReleaseStatus.values)}.")
    approvals = ApprovalResponse(many=True, read_only=True)
    publishedAt = serializers.DateTimeField(source="published_at", allow_null=True)
    publishedBy = serializers.CharField(source="published_by.get_username", allow_null=True, default=None)
    unreviewed = serializers.BooleanField(help_text="Published with fewer approvals than the policy asks.")

    class Meta:
        model = CatalogRevision
        fields = [
            "revision", "createdAt", "createdBy", "summary", "status", "approvals", "publishedAt", "publishedBy",
            "unreviewed",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.ChoiceField(choices=ReleaseStatus.values))
    def get_status(self, revision) -> str:
        return revision_status(revision, self.context["state"])


class RevisionDiffQuery(RequestSerializer):
    against = serializers.IntegerField(
        required=False, min_value=1, default=None, help_text="The revision to compare with; the published one if left out."
    )


class FieldChange(serializers.Serializer):
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)


class ToolChanges(serializers.Serializer):
    added = _strings()
    removed = _strings()


class ModeDiffResponse(serializers.Serializer):
    key = serializers.CharField()
    change = serializers.ChoiceField(choices=["added", "removed", "changed", "unchanged"])
    fields = serializers.DictField(child=FieldChange())
    prompt = _strings()
    tools = ToolChanges()


class RevisionDiffResponse(serializers.Serializer):
    revision = serializers.IntegerField()
    against = serializers.IntegerField()
    modes = ModeDiffResponse(many=True)


class ModeDetailResponse(serializers.Serializer):
    id = serializers.CharField()
    key = serializers.CharField()
    displayName = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    whenToUse = serializers.CharField()
    isDefault = serializers.BooleanField()
    status = serializers.ChoiceField(choices=AgentMode.Status.values)
    version = serializers.CharField()
    source = serializers.ChoiceField(choices=AgentMode.Source.values)
    position = serializers.IntegerField()
    modeInstructions = _strings()
    behaviorHints = _strings()
    humanRoleHints = _strings()
    exampleUtterances = _strings()
    associatedToolIds = _strings()
    toolGroupHints = _strings()
    ragScopeHints = _strings()
    strongSignals = _strings()
    weakSignals = _strings()
    switchTargets = _switch_targets()
    llmCanEnter = _llm_can_enter()
    createdAt = serializers.DateTimeField()
    updatedAt = serializers.DateTimeField()


class ModeToolsResponse(serializers.Serializer):
    mode = serializers.CharField()
    tools = _strings()
