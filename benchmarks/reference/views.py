"""The reference endpoints: what a plain DRF project answers, against which the app's endpoints are measured."""

import json

from django.db import transaction
from django.db.models import Subquery
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from .models import Mode, ModeChange, Session


class ConstantView(APIView):
    """A token-authenticated view returning a small constant."""

    def get(self, request):
        return Response({"ok": True})


class DurableUpdateView(APIView):
    """The same, plus one single-row UPDATE committed in a transaction (the mode change's floor)."""

    def post(self, request):
        arguments = request.data["arguments"]
        with transaction.atomic():
            updated = Session.objects.filter(pk=request.data["sessionId"], owner=request.user).update(
                mode_id=Subquery(Mode.objects.filter(key=arguments["mode"]).values("pk")[:1])
            )
        return Response({"updated": updated})


class NaiveChangeModeView(APIView):
    """A mode change as a newcomer writes it with the ORM: lock the session, record the change, save."""

    def post(self, request):
        arguments = request.data["arguments"]
        with transaction.atomic():
            session = Session.objects.select_for_update().get(pk=request.data["sessionId"], owner=request.user)
            target = Mode.objects.get(key=arguments["mode"])
            ModeChange.objects.create(
                session=session,
                from_mode_id=session.mode_id,
                to_mode=target,
                reason=arguments["reason"],
                branch=arguments["branch"],
                changed_by=request.user,
            )
            session.mode = target
            session.save()
        result = {"success": True, "mode": target.key, "branch": arguments["branch"], "reason": arguments["reason"]}
        return Response({"successful": True, "result": json.dumps(result), "errorMessage": None})


class ModeSerializer(serializers.ModelSerializer):
    class Meta:
        model = Mode
        fields = [
            "id", "key", "display_name", "description", "when_to_use", "is_default", "human_role_hints",
            "source", "status",
        ]


class NaiveModeListView(generics.ListAPIView):
    """The modes through a ListAPIView and a ModelSerializer, read from the database on every request."""

    queryset = Mode.objects.all()
    serializer_class = ModeSerializer
