"""
Request and response shapes of the mode endpoints. The payloads themselves are
built by modes.listing, shared with agent_list_modes; these describe them in the
OpenAPI schema, and the schema tests check the two agree.
"""

from rest_framework import serializers

from aptix_site.api import PresentIfEmpty, RequestSerializer, StrictCharField

from .models import AgentMode, CatalogRevision
from .tools import FILTER_MAX_LENGTH


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


class ModeListResponse(serializers.Serializer):
    modes = ModeSummaryResponse(many=True)
    catalogRevision = serializers.IntegerField(help_text="The catalog revision this listing shows.")


class CatalogRevisionSummary(serializers.ModelSerializer):
    revision = serializers.IntegerField(source="number")
    createdAt = serializers.DateTimeField(source="created_at")
    createdBy = serializers.CharField(source="created_by.get_username", allow_null=True, default=None)

    class Meta:
        model = CatalogRevision
        fields = ["revision", "createdAt", "createdBy", "summary"]
        read_only_fields = fields


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
    createdAt = serializers.DateTimeField()
    updatedAt = serializers.DateTimeField()


class ModeToolsResponse(serializers.Serializer):
    mode = serializers.CharField()
    tools = _strings()
