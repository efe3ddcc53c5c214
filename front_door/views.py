"""GET /: a page for a person who opens the service's address, or the JSON index of its entry points for a program."""

from django.http import JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.vary import vary_on_headers

from aptix_site.middleware import serves_methods

from .entry_points import api_entry_points, index_payload, operator_entry_points


@serves_methods("GET", "HEAD")
@vary_on_headers("Accept")
def front_door(request):
    if request.get_preferred_type(["text/html", "application/json"]) == "application/json":
        return JsonResponse(index_payload())
    context = {"api_entry_points": api_entry_points(), "operator_entry_points": operator_entry_points()}
    # As a shell command: $SESSION is the variable the README's walk-through sets.
    context["mcp_session_url"] = request.build_absolute_uri(reverse("mcp-session", args=["$SESSION"]) + "/")
    return render(request, "front_door/index.html", context)
