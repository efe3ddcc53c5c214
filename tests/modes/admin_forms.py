"""
The modes admin as a browser drives it, for every test of the admin's pages: its URLs, the POST body of the
change form, and what a response shows (messages, form errors).
"""

import re

from django.urls import reverse

from ..expected import LIST_FIELDS

CHANGELIST = reverse("admin:modes_agentmode_changelist")


LOADED = re.compile(r'<input type="hidden" name="_loaded_revision" value="(\d+)">')


def loaded_revision(client, url) -> dict:
    """The hidden field of a page that edits rows (a change form, the mode list), as a browser that opened it posts it."""
    return {"_loaded_revision": LOADED.search(client.get(url).content.decode()).group(1)}


def change_url(pk):
    return reverse("admin:modes_agentmode_change", args=[pk])


def delete_url(pk):
    return reverse("admin:modes_agentmode_delete", args=[pk])


def form_data(mode=None, **overrides):
    """The POST body of the change form as the browser would send it for this mode (or a new one)."""
    data = {
        "key": "research",
        "display_name": "Research",
        "description": "Finding and comparing sources.",
        "when_to_use": "Use this mode when the user wants sources found and compared.",
        "status": "active",
        "version": "v1",
        "position": "",
        **{name: "" for name in LIST_FIELDS},
        "llm_can_enter": "on",  # a checked checkbox; an unchecked one is left out of the body
        "entry_confirmation": "inherit",
        "prompt": "",
        "custom_instructions": "",
    }
    if mode is not None:
        if not mode.llm_can_enter:
            del data["llm_can_enter"]
        data.update(
            key=mode.key,
            display_name=mode.display_name,
            description=mode.description,
            when_to_use=mode.when_to_use,
            status=mode.status,
            version=mode.version,
            entry_confirmation=mode.entry_confirmation,
            prompt=mode.prompt,
            custom_instructions=mode.custom_instructions,
            position=str(mode.position),
            **{name: "\n".join(getattr(mode, name)) for name in LIST_FIELDS},
        )
    data.update(overrides)
    return data


def messages_of(response):
    return [str(message) for message in response.context["messages"]]


def form_errors(response):
    return response.context["adminform"].form.errors
