"""URL map: the admin, and the REST API under /api/."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("modes.urls")),
    path("api/", include("sessions_app.urls")),
    path("api/", include("agent_tools.urls")),
]
