"""The request to create a session, and the shapes of sessions and their audit rows in the REST API."""

from rest_framework import serializers

from aptix_site.api import StrictCharField, StrictSerializer
from aptix_site.shapes import ModelShape

from .models import AgentSession, ModeChange


class SessionCreate(StrictSerializer):
    """A new session: its mode (the default mode if left out) and a title; other fields are refused."""

    mode = StrictCharField(required=False, allow_blank=True, max_length=64, default="")
    title = StrictCharField(required=False, allow_blank=True, max_length=200, default="")


class AgentSessionSerializer(ModelShape):
    mode = serializers.CharField(source="mode.key")
    mode_id = serializers.CharField()
    org = serializers.CharField(source="org.slug", allow_null=True)
    parent_id = serializers.UUIDField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    class Meta:
        model = AgentSession
        fields = ["id", "mode", "mode_id", "title", "org", "parent_id", "created_at", "updated_at"]
        read_only_fields = fields


class ModeChangeSerializer(ModelShape):
    from_mode = serializers.CharField(source="from_mode.key")
    to_mode = serializers.CharField(source="to_mode.key")
    branch_session_id = serializers.UUIDField(allow_null=True)
    changed_by = serializers.CharField(source="changed_by.get_username", allow_null=True)
    catalog_revision = serializers.IntegerField(allow_null=True, help_text="The catalog revision in force at the change.")
    changed_at = serializers.DateTimeField()

    class Meta:
        model = ModeChange
        fields = [
            "id", "from_mode", "to_mode", "reason", "branch", "branch_session_id", "changed_by", "catalog_revision",
            "changed_at",
        ]
        read_only_fields = fields
