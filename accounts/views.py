"""POST /api/token/: trade a username and password for an API token, throttled against guessing."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.parsers import FormParser

from aptix_site.api import SettingsRateThrottle, StrictCharField, StrictJSONParser, StrictSerializer, error_responses


# DRF's credentials check, refusing unknown fields and non-text values like every other body here.
class Credentials(StrictSerializer, AuthTokenSerializer):
    """The username and password of an account; other fields are refused."""

    username = StrictCharField(max_length=150, write_only=True)
    password = StrictCharField(max_length=4096, trim_whitespace=False, write_only=True)
    token = None


class TokenResponse(serializers.Serializer):
    token = serializers.CharField()


class TokenView(ObtainAuthToken):
    # Credentials come in the body; a stale Authorization header must not turn this into a 401.
    authentication_classes = []
    parser_classes = [StrictJSONParser, FormParser]
    serializer_class = Credentials
    throttle_classes = [SettingsRateThrottle]
    throttle_scope = "token"

    @extend_schema(operation_id="obtainToken", auth=[], responses={200: TokenResponse, **error_responses(400, 411, 413, 415, 429)})
    def post(self, request, *args, **kwargs):
        return super().post(request, *args, **kwargs)
