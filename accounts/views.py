"""POST /api/token/: trade a username and password for an API token, throttled against guessing."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.parsers import FormParser

from aptix_site.api import SettingsRateThrottle, StrictJSONParser, error_responses


class TokenResponse(serializers.Serializer):
    token = serializers.CharField()


class TokenView(ObtainAuthToken):
    # Credentials come in the body; a stale Authorization header must not turn this into a 401.
    authentication_classes = []
    parser_classes = [StrictJSONParser, FormParser]
    throttle_classes = [SettingsRateThrottle]
    throttle_scope = "token"

    @extend_schema(operation_id="obtainToken", auth=[], responses={200: TokenResponse, **error_responses(400, 413, 415, 429)})
    def post(self, request, *args, **kwargs):
        return super().post(request, *args, **kwargs)
