"""The app's URLs plus the baselines: a DRF view with the same authentication, and a plain Django view."""

from django.http import HttpResponse
from django.urls import path
from rest_framework.response import Response
from rest_framework.views import APIView

from aptix_site.urls import urlpatterns as app_urlpatterns


class ConstantDRFView(APIView):
    def get(self, request):
        return Response({"ok": True})


def constant_plain_view(request):
    return HttpResponse(b"ok", content_type="text/plain")


urlpatterns = [
    *app_urlpatterns,
    path("bench/drf/", ConstantDRFView.as_view()),
    path("bench/plain/", constant_plain_view),
]
