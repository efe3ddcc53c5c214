"""URL map: the front door, the admin, and the REST API under /api/ (with JSON 400, 404 and 500 pages there)."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from accounts.views import TokenView
from aptix_site.middleware import serves_methods
from front_door.views import front_door
from health.views import healthz, readyz

# Swagger UI's start-up script in a second request (?script) rather than inline, for the page's CSP.
swagger_ui = SpectacularSwaggerSplitView.as_view(url_name="api-schema", template_name="front_door/api_docs.html")

# The API first: most requests are API requests, and patterns are tried in order.
api_urlpatterns = [
    path("", include("agent_api.urls")),
    path("", include("modes.urls")),
    path("", include("sessions_app.urls")),
    path("token/", TokenView.as_view(), name="api-token"),
    # Read-only pages whose DRF 405 would be YAML or an HTML error: the JSON 405 of the pages outside the API.
    path("schema/", serves_methods("GET", "HEAD")(SpectacularAPIView.as_view()), name="api-schema"),
    path("docs/", serves_methods("GET", "HEAD")(swagger_ui), name="api-docs"),
]

urlpatterns = [
    path("api/", include(api_urlpatterns)),
    path("", include("mcp_server.urls")),
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("admin/", admin.site.urls),
    path("", front_door, name="front-door"),
]

handler400 = "aptix_site.errors.bad_request"
handler404 = "aptix_site.errors.page_not_found"
handler500 = "aptix_site.errors.server_error"
