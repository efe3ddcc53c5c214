"""URL map: the admin, and the REST API under /api/."""

from django.contrib import admin
from django.urls import include, path
from rest_framework.authtoken.views import obtain_auth_token

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/token/", obtain_auth_token, name="api-token"),
    path("api/", include("modes.urls")),
    path("api/", include("sessions_app.urls")),
    path("api/", include("agent_tools.urls")),
]
