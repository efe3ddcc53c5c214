"""Gives each request what it is served (request.release, and request.catalog), read once, when a view first asks."""

from django.utils.functional import SimpleLazyObject

from .catalog import published_release


class PublishedCatalogMiddleware:
    """
    As AuthenticationMiddleware gives request.user, so that every answer to one request (its ETag and its body, a
    tool and the checks before it) comes from one revision. request.catalog is the control catalog, for what names
    no session; a view that serves a session takes request.release.catalog_for(session). Views hand the catalog to
    the services as an argument.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.release = SimpleLazyObject(published_release)
        request.catalog = SimpleLazyObject(lambda: request.release.control)
        return self.get_response(request)
