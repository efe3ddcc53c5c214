"""
The app's URLs plus a diagnostic: a constant DRF view inside this project's own stack (its settings, middleware,
authentication). Set against the reference project's constant view, it shows what the stack itself costs.
"""

from django.urls import path
from rest_framework.response import Response
from rest_framework.views import APIView

from aptix_site.urls import urlpatterns as app_urlpatterns


class ConstantDRFView(APIView):
    def get(self, request):
        return Response({"ok": True})


urlpatterns = [*app_urlpatterns, path("bench/drf/", ConstantDRFView.as_view())]
