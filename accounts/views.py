"""POST /api/token/: trade a username and password for a new API token, throttled and locked against guessing."""

from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.parsers import FormParser
from rest_framework.response import Response
from rest_framework.views import APIView

from aptix_site.api import StrictCharField, StrictSerializer, error_responses
from aptix_site.content import StrictJSONParser
from aptix_site.throttling import WindowRateThrottle

from .lockout import lockout_message, lockout_seconds
from .models import ApiToken
from .tokens import create_token

LOGIN_TOKEN_DAYS = 30  # without API_TOKEN_TTL_DAYS: a login is not meant to last for ever


class Credentials(StrictSerializer, AuthTokenSerializer):
    """The username and password of an account, and a name for the new token; other fields are refused."""

    username = StrictCharField(max_length=150, write_only=True)
    password = StrictCharField(max_length=4096, trim_whitespace=False, write_only=True)
    name = StrictCharField(
        max_length=ApiToken._meta.get_field("name").max_length, default="api", write_only=True,
        help_text="What the token is for, to find it among the user's tokens later (default: api).",
    )
    token = None


class TokenResponse(serializers.Serializer):
    token = serializers.CharField(help_text="The new token's key; shown this once, only its digest is kept.")


class TokenView(APIView):
    # Credentials come in the body; a stale Authorization header must not turn this into a 401.
    authentication_classes = []
    permission_classes = []
    parser_classes = [StrictJSONParser, FormParser]
    throttle_classes = [WindowRateThrottle]
    throttle_scope = "token"

    @extend_schema(
        operation_id="obtainToken",
        auth=[],
        request=Credentials,
        responses={200: TokenResponse, **error_responses(400, 409, 411, 413, 415, 429)},
    )
    def post(self, request, *args, **kwargs):
        try:
            credentials = Credentials.validated(request.data, request=request, view=self)
        except exceptions.ValidationError:
            # django-axes refused the login (the password was not even checked) and marked the request.
            if getattr(request, "axes_locked_out", False):
                raise exceptions.Throttled(wait=lockout_seconds(), detail=lockout_message(request=request)) from None
            raise
        user = credentials["user"]
        # A new token at each login, the earlier ones kept: the hosts of one back-end each log in at their start.
        days = settings.API_TOKEN_TTL_DAYS or LOGIN_TOKEN_DAYS
        _, key = create_token(user=user, name=credentials["name"], expires_in_days=days)
        # A token is a login: django-axes forgets the failures before it, and last_login is kept.
        user_logged_in.send(sender=type(user), request=request._request, user=user)
        return Response({"token": key})
