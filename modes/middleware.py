"""Gives each request the catalog it is served (request.catalog), read once, when a view first asks for it."""

from django.utils.functional import SimpleLazyObject

from .catalog import published_catalog


class PublishedCatalogMiddleware:
    """
    As AuthenticationMiddleware gives request.user, so that every answer to one request (its ETag and its body, a
    tool and the checks before it) comes from one revision. Views hand it to the services as an argument.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.catalog = SimpleLazyObject(published_catalog)
        return self.get_response(request)
