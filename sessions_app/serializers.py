"""The requests and the shapes of sessions, their audit rows and the transition counts in the REST API."""

from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers

from aptix_site.api import RequestSerializer, RevisionNumberField, StrictCharField, StrictSerializer, WholeNumberField
from aptix_site.shapes import ModelShape, Shape
from modes.serializers import RolloutResponse

from .models import AgentSession, ModeChange, ModeChangeConfirmation
from .rollout_cohorts import cohorts
from .transitions import MAX_DAYS


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




class HowConfirmed(Shape):
    # Read from the ModeChange itself (source="*"): its confirmed_by, its confirmation's id, and the channel
    # mode_changes_of annotates it with.
    by = serializers.ChoiceField(
        source="confirmed_by", choices=ModeChange.ConfirmedBy.values,
        help_text="Who confirmed the change: the user (answering the question the server asked), the model's call, "
        "or nobody (a mode whose entry_confirmation is none).",
    )
    channel = serializers.ChoiceField(
        source="confirmation_channel", choices=ModeChangeConfirmation.Channel.values, allow_null=True,
        help_text="Where the user answered the question: over MCP or REST; null unless the user confirmed.",
    )
    id = serializers.UUIDField(
        source="confirmation_id", allow_null=True, help_text="The question's id; null unless the user confirmed."
    )


class ModeChangeSerializer(ModelShape):
    # The mode keys, the user's name and the confirmation's channel are annotations of selectors.mode_changes_of,
    # its only source of rows.
    from_mode = serializers.CharField(source="from_mode_key")
    to_mode = serializers.CharField(source="to_mode_key")
    branch_session_id = serializers.UUIDField(allow_null=True)
    changed_by = serializers.CharField(source="changed_by_name", allow_null=True)
    catalog_revision = serializers.IntegerField(
        allow_null=True, help_text="The catalog revision in force at the change."
    )
    changed_at = serializers.DateTimeField()
    confirmation = HowConfirmed(source="*", help_text="How the change was confirmed (issue 40).")

    class Meta:
        model = ModeChange
        fields = [
            "id", "from_mode", "to_mode", "reason", "branch", "branch_session_id", "changed_by", "catalog_revision",
            "changed_at", "confirmation",
        ]
        read_only_fields = fields


class TransitionsQuery(RequestSerializer):
    days = WholeNumberField(
        required=False, max_value=MAX_DAYS, default=30,
        help_text=f"The period: today (UTC) and the days before it, 1 to {MAX_DAYS}.",
    )
    revision = RevisionNumberField(
        required=False, default=None,
        help_text="Only the switches made, refused or declined under this catalog revision (a rollout's cohort).",
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
        "revision": serializers.IntegerField(allow_null=True, help_text="The revision asked for, if one was."),
        "transitions": _pairs(
            "Transition",
            "The switches agents took in the period, most taken first.",
            branches=serializers.IntegerField(help_text="How many of them started a new session."),
        ),
        "refusals": _pairs("Refusal", "The switches the model asked for and the mode graph refused, most first."),
        "declined": _pairs(
            "DeclinedProposal",
            "The switches the model proposed and the user declined (issue 40: a question answered stay, decline or "
            "cancel, by the day of the answer; an unanswered question that expired is not counted), most first. A "
            "deleted mode is named by its id.",
        ),
        "byDay": inline_serializer(
            name="TransitionsOnDay",
            fields={
                "date": serializers.DateField(),
                "count": serializers.IntegerField(),
                "declined": serializers.IntegerField(help_text="The proposals the user declined that day."),
            },
            many=True,
            help_text="The switches taken on each day of the period, oldest first.",
        ),
    },
)


class CohortResponse(Shape):
    """What the sessions served one revision did since the rollout started; a small count reads as small."""

    revision = serializers.IntegerField()
    sessions = serializers.IntegerField(help_text="Sessions created or acting (a change, a refusal, a decline).")
    changes = serializers.IntegerField(help_text="Mode changes.")
    refused = serializers.IntegerField(help_text="Switches the mode graph refused.")
    declined = serializers.IntegerField(help_text="Proposals the user declined.")
    changes_per_session = serializers.FloatField()
    refused_per_session = serializers.FloatField()
    declined_per_session = serializers.FloatField()
    routing_accuracy = serializers.FloatField(
        allow_null=True, help_text="The revision's latest routing evaluation by CATALOG_EVAL_SCORER, if any."
    )
    routing_cases = serializers.IntegerField(allow_null=True, help_text="The cases it scored.")


class RolloutStatusResponse(RolloutResponse):
    """The rollout in flight, or else the last one; its cohort (first) and the control's."""

    in_flight = serializers.SerializerMethodField(method_name="get_in_flight")
    cohorts = serializers.SerializerMethodField()

    class Meta(RolloutResponse.Meta):
        fields = [*RolloutResponse.Meta.fields, "in_flight", "cohorts"]
        read_only_fields = fields

    def get_in_flight(self, rollout) -> bool:
        return rollout.state == rollout.State.IN_FLIGHT

    @extend_schema_field(CohortResponse(many=True))
    def get_cohorts(self, rollout) -> list:
        return CohortResponse([cohort.report() for cohort in cohorts(rollout)], many=True).data
