"""The camelCase shapes of sessions and their audit rows in the REST API."""

from rest_framework import serializers

from aptix_site.api import StrictCharField, StrictSerializer

from .models import AgentSession, ModeChange


class SessionCreate(StrictSerializer):
    """A new session: its mode (the default mode if left out) and a title; other fields are refused."""

    mode = StrictCharField(required=False, allow_blank=True, max_length=64, default="")
    title = StrictCharField(required=False, allow_blank=True, max_length=200, default="")


class AgentSessionSerializer(serializers.ModelSerializer):
    mode = serializers.CharField(source="mode.key")
    modeId = serializers.CharField(source="mode_id")
    org = serializers.CharField(source="org.slug", allow_null=True)
    parentId = serializers.UUIDField(source="parent_id", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")

    class Meta:
        model = AgentSession
        fields = ["id", "mode", "modeId", "title", "org", "parentId", "createdAt", "updatedAt"]
        read_only_fields = fields


class ModeChangeSerializer(serializers.ModelSerializer):
    fromMode = serializers.CharField(source="from_mode.key")
    toMode = serializers.CharField(source="to_mode.key")
    branchSessionId = serializers.UUIDField(source="branch_session_id", allow_null=True)
    changedBy = serializers.CharField(source="changed_by.get_username", allow_null=True)
    catalogRevision = serializers.IntegerField(
        source="catalog_revision", allow_null=True, help_text="The catalog revision in force at the change."
    )
    changedAt = serializers.DateTimeField(source="changed_at")

    class Meta:
        model = ModeChange
        fields = [
            "id", "fromMode", "toMode", "reason", "branch", "branchSessionId", "changedBy", "catalogRevision",
            "changedAt",
        ]
        read_only_fields = fields
