"""The camelCase shapes of sessions, their audit rows and the transition counts in the REST API."""

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers

from aptix_site.api import RequestSerializer, StrictCharField, StrictSerializer

from .models import AgentSession, ModeChange
from .transitions import MAX_DAYS


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


class TransitionsQuery(RequestSerializer):
    days = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_DAYS, default=30,
        help_text=f"The period: today (UTC) and the days before it, 1 to {MAX_DAYS}.",
    )


def _pairs(name: str, help_text: str, **extra):
    """A list of pairs of modes by key ('from' and 'to' are not Python names, hence inline_serializer)."""
    fields = {
        "from": serializers.CharField(help_text="The mode's key (its id, if a refusal names a deleted mode)."),
        "to": serializers.CharField(),
        "count": serializers.IntegerField(),
        **extra,
    }
    return inline_serializer(name=name, fields=fields, many=True, help_text=help_text)


TRANSITIONS_RESPONSE = inline_serializer(
    name="Transitions",
    fields={
        "days": serializers.IntegerField(),
        "transitions": _pairs(
            "Transition",
            "The switches agents took in the period, most taken first.",
            branches=serializers.IntegerField(help_text="How many of them started a new session."),
        ),
        "refusals": _pairs("Refusal", "The switches the model asked for and the mode graph refused, most first."),
        "byDay": inline_serializer(
            name="TransitionsOnDay",
            fields={"date": serializers.DateField(), "count": serializers.IntegerField()},
            many=True,
            help_text="The switches taken on each day of the period, oldest first.",
        ),
    },
)
