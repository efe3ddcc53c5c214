"""URL map: the front door, the admin, and the REST API under /api/ (with JSON 400, 404 and 500 pages there)."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from accounts.views import TokenView
from front_door.views import front_door
from health.views import healthz, readyz

admin.site.site_header = "Aptix Modes administration"
admin.site.site_title = "Aptix Modes admin"
admin.site.index_title = "Modes, tools, sessions and accounts"

urlpatterns = [
    path("", front_door, name="front-door"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/token/", TokenView.as_view(), name="api-token"),
    path("api/", include("modes.urls")),
    path("api/", include("sessions_app.urls")),
    path("api/", include("agent_api.urls")),
    path("", include("mcp_server.urls")),
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
]

handler400 = "aptix_site.errors.bad_request"
handler404 = "aptix_site.errors.page_not_found"
handler500 = "aptix_site.errors.server_error"
