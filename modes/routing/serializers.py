"""The shapes of the routing endpoints' requests and answers (camelCase, as every answer's: aptix_site.shapes)."""

from rest_framework import serializers

from aptix_site.api import RequestSerializer, StrictCharField, StrictSerializer
from aptix_site.shapes import ModelShape, Shape

from ..listing import string_list
from ..models import ROUTING_STAY, RoutingCase


class RoutingCaseShape(ModelShape):
    class Meta:
        model = RoutingCase
        fields = ["id", "utterance", "current_mode", "expected", "created_at", "updated_at"]
        read_only_fields = fields


class RoutingCaseRequest(StrictSerializer):
    utterance = StrictCharField(max_length=1000, help_text="What the user says, as one message.")
    currentMode = StrictCharField(
        max_length=64, allow_blank=True, default="",
        help_text="Key of the mode the session is in when it arrives; empty or left out: the default mode.",
    )
    expected = StrictCharField(
        max_length=64, help_text=f"Key of the mode the model should propose, or {ROUTING_STAY} for none."
    )


class EvaluationQuery(RequestSerializer):
    scorer = serializers.ChoiceField(choices=["offline", "llm"], default="offline", help_text="Whose evaluation.")


class PrecisionRecall(serializers.Serializer):
    precision = serializers.FloatField(allow_null=True, help_text="Of the cases predicted this, the share expected so.")
    recall = serializers.FloatField(allow_null=True, help_text="Of the cases expected this, the share predicted so.")


class CaseOutcomeShape(Shape):
    utterance = serializers.CharField()
    current_mode = serializers.CharField()
    expected = serializers.CharField()
    predicted = serializers.CharField(allow_null=True, help_text="null: the scorer got no answer (see error).")
    error = serializers.CharField(required=False, help_text="Why the scorer got no answer: a timeout, a 429, a key.")


class SkippedCaseShape(CaseOutcomeShape):
    reason = serializers.CharField(help_text="Why this revision cannot score it.")


class ViolationShape(CaseOutcomeShape):
    called = serializers.CharField(help_text="The mode of the agent_change_mode call made without the user's yes.")


class MoveShape(Shape):
    was = serializers.CharField(allow_null=True, help_text="What the published revision predicted.")
    now = serializers.CharField(allow_null=True, help_text="What this revision predicts.")
    cases = serializers.IntegerField()


class RoutingChangesShape(Shape):
    against = serializers.IntegerField(help_text="The published revision.")
    accuracy = serializers.FloatField(allow_null=True, help_text="The published revision's, by the same scorer.")
    moves = MoveShape(many=True, help_text="Cases both scored whose prediction changes, most first.")
    summary = string_list(help_text='Each move as a sentence: "This edit moves 3 cases from a to b."')


class RoutingEvaluationResponse(Shape):
    revision = serializers.IntegerField()
    scorer = serializers.CharField()
    created_at = serializers.DateTimeField()
    created_by = serializers.CharField(allow_null=True)
    accuracy = serializers.FloatField(allow_null=True, help_text="passed / cases; null with no case.")
    cases = serializers.IntegerField()
    passed = serializers.IntegerField()
    labels = string_list(help_text="The modes' keys in catalog order, then stay: the matrix's order.")
    per_mode = serializers.DictField(child=PrecisionRecall(), help_text="Per mode key (and stay).")
    confusion = serializers.DictField(
        child=serializers.DictField(child=serializers.IntegerField()), help_text="{expected: {predicted: count}}."
    )
    failures = CaseOutcomeShape(many=True)
    violations = ViolationShape(
        many=True, help_text="agent_change_mode called in a one-message case, which no user has confirmed (TUL-007 "
        "§4.3): each fails."
    )
    errors = serializers.IntegerField(
        help_text="Cases the scorer got no usable answer for (a failed call, a reply naming several modes): each fails."
    )
    skipped = SkippedCaseShape(
        many=True, help_text="Stored cases this revision cannot score, each with why (a mode it lacks, ...)."
    )
    changes = RoutingChangesShape(allow_null=True, help_text="Against the published revision; null for that one, "
                                  "or when it has no evaluation by this scorer.")
