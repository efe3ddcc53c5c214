"""Request filters that run before any view (API bodies of unknown or excessive size, NUL characters, methods the
views outside DRF do not serve) and the Content-Security-Policy of the HTML pages."""

from csp.middleware import CSPMiddleware
from django.conf import settings
from django.http import HttpResponseNotAllowed
from django.utils.deprecation import MiddlewareMixin

from .errors import API_PREFIX, MCP_PREFIX, api_error_response, method_not_allowed_response

# Under WSGI Django reads a body only up to its Content-Length, so a chunked body would be taken for an
# empty one and the request served as if nothing had been sent. The API asks for a length on every server.
LENGTH_REQUIRED = "Send the request body with a Content-Length header; chunked bodies are not accepted."


class RequestBodyLimitMiddleware(MiddlewareMixin):
    """Under /api/ and /mcp, a request that sends a body must say how long it is, and stay under the limit (its
    path's, in API_BODY_LIMITS, or API_MAX_BODY_BYTES)."""

    def process_request(self, request):
        if not request.path.startswith((API_PREFIX, MCP_PREFIX)) or request.method in ("GET", "HEAD", "OPTIONS"):
            return None
        if "HTTP_TRANSFER_ENCODING" in request.META:
            return api_error_response(request, LENGTH_REQUIRED, 411)
        raw = request.META.get("CONTENT_LENGTH") or "0"
        if not (raw.isascii() and raw.isdigit()):
            return api_error_response(request, f"Content-Length must be a number of bytes, not {raw[:20]!r}.", 400)
        limit = settings.API_BODY_LIMITS.get(request.path, settings.API_MAX_BODY_BYTES)
        # The length first: int() refuses a string of thousands of digits.
        if len(raw.lstrip("0")) > len(str(limit)) or int(raw) > limit:
            shown = raw if len(raw) <= 20 else f"{raw[:20]}... ({len(raw)} digits)"
            return api_error_response(request, f"The request body is {shown} bytes; the limit is {limit}.", 413)


class RejectNulCharactersMiddleware(MiddlewareMixin):
    """A NUL in the URL, a cookie or a form body is a 400: PostgreSQL cannot store or compare it (a 500 otherwise)."""

    def process_request(self, request):
        form_post = request.method == "POST" and request.content_type == "application/x-www-form-urlencoded"
        if (
            "\x00" in request.path
            or "%00" in request.META.get("QUERY_STRING", "")
            # Django decodes a quoted cookie's octal escapes, so a plain-ASCII header can carry a NUL.
            or any("\x00" in value for value in request.COOKIES.values())
            or (form_post and b"%00" in request.body)
        ):
            return api_error_response(request, "NUL characters are not allowed in URLs, cookies or form data.", 400)


# The admin's pages are read with GET and written with POST; it would take any other method for a GET.
ADMIN_METHODS = ("GET", "HEAD", "POST")
STATIC_METHODS = ("GET", "HEAD")


def serves_methods(*methods: str):
    """Marks a view outside DRF as serving only these methods: any other gets ServedMethodsMiddleware's JSON 405."""

    def mark(view):
        view.served_methods = methods
        return view

    return mark


class ServedMethodsMiddleware(MiddlewareMixin):
    """The JSON 405 of the views outside DRF: the admin's, those marked with serves_methods, and the static files."""

    def process_request(self, request):
        if request.method not in STATIC_METHODS and request.path.startswith(settings.STATIC_URL):
            return method_not_allowed_response(method=request.method, allowed=STATIC_METHODS)

    @staticmethod
    def process_view(request, view_func, view_args, view_kwargs):
        admin = request.resolver_match.namespace == "admin"
        allowed = ADMIN_METHODS if admin else getattr(view_func, "served_methods", None)
        if allowed is None or request.method in allowed:
            return None
        return method_not_allowed_response(method=request.method, allowed=allowed)

    @staticmethod
    def process_response(request, response):
        """
        A page that takes fewer of those methods (require_POST, require_safe, Django's LogoutView) refuses in Django's
        words, an empty page: said in the same JSON, naming the methods of its own that reach it.
        """
        if not isinstance(response, HttpResponseNotAllowed):
            return response
        match = getattr(request, "resolver_match", None)
        reaching = ADMIN_METHODS if match is not None and match.namespace == "admin" else None
        own = (method.strip() for method in response["Allow"].split(","))
        allowed = tuple(method for method in own if reaching is None or method in reaching)
        return method_not_allowed_response(method=request.method, allowed=allowed)


class HtmlContentSecurityPolicyMiddleware(CSPMiddleware):
    """django-csp's, for HTML responses only: a JSON answer runs no script (docs/security.md)."""

    def process_response(self, request, response):
        if not response.get("Content-Type", "").startswith("text/html"):
            return response
        return super().process_response(request, response)
