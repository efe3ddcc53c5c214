"""Gives each request the catalog it is served (request.catalog), read once, when a view first asks for it."""

from django.utils.functional import SimpleLazyObject

from .catalog import published_catalog


class PublishedCatalogMiddleware:
    """Like request.user, so that all one request answers (its ETag and body, a tool and its checks) is one revision."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.catalog = SimpleLazyObject(published_catalog)
        return self.get_response(request)
