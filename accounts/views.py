"""POST /api/token/: trade a username and password for an API token, throttled and locked against guessing."""

from django.contrib.auth.signals import user_logged_in
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.parsers import FormParser
from rest_framework.response import Response

from aptix_site.api import StrictCharField, StrictSerializer, error_responses
from aptix_site.content import StrictJSONParser
from aptix_site.throttling import WindowRateThrottle

from .lockout import lockout_message, lockout_seconds


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
    throttle_classes = [WindowRateThrottle]
    throttle_scope = "token"

    @extend_schema(operation_id="obtainToken", auth=[], responses={200: TokenResponse, **error_responses(400, 411, 413, 415, 429)})
    def post(self, request, *args, **kwargs):
        credentials = self.get_serializer(data=request.data)
        try:
            credentials.is_valid(raise_exception=True)
        except exceptions.ValidationError:
            # django-axes refused the login (the password was not even checked) and marked the request.
            if getattr(request, "axes_locked_out", False):
                raise LoginLockedOut(request) from None
            raise
        user = credentials.validated_data["user"]
        token, _ = Token.objects.get_or_create(user=user)
        # A token is a login: django-axes forgets the failures before it, and last_login is kept.
        user_logged_in.send(sender=type(user), request=request._request, user=user)
        return Response({"token": token.key})


class LoginLockedOut(exceptions.Throttled):
    def __init__(self, request):
        super().__init__(wait=lockout_seconds(), detail=lockout_message(request=request))
