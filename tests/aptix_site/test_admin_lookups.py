"""
The admin's lists are filtered only by their own filters (aptix_site.admin.ListFiltersOnly), in every app, Django's
and django-axes' too: a lookup the database refuses is a 400, never a 500; the filters and the links that use them
still work.
"""

import pytest
from django.contrib import admin
from django.urls import reverse

from modes.models import AgentMode

CHANGELISTS = sorted(
    (model._meta.label, reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist"), model)
    for model in admin.site._registry
)


def first_text_field(model):
    texts = [field.name for field in model._meta.concrete_fields if field.get_internal_type() in ("CharField", "TextField")]
    return (texts or [model._meta.pk.name])[0]


@pytest.mark.parametrize("lookup", ["__regex=(", "__range=1"])  # a DataError on PostgreSQL; an IndexError
@pytest.mark.parametrize("label, url, model", CHANGELISTS, ids=[label for label, _, _ in CHANGELISTS])
def test_a_lookup_no_filter_offers_is_a_400_in_every_list(admin_client, label, url, model, lookup):
    response = admin_client.get(f"{url}?{first_text_field(model)}{lookup}")
    assert response.status_code == 400


@pytest.mark.parametrize(
    "query",
    ["status__exact=active", "is_default__exact=1", "source__exact=builtin", "status__isnull=True"],
)
def test_the_lists_own_filters_still_filter(admin_client, query):
    response = admin_client.get(f"{reverse('admin:modes_agentmode_changelist')}?{query}")
    assert response.status_code == 200
    assert response.context["cl"].result_count == AgentMode.objects.filter(
        **{key: {"1": True, "True": True}.get(value, value) for key, value in [query.split("=")]}
    ).count()


def test_a_sessions_link_to_its_mode_changes_still_opens_them(admin_client, alice_session):
    url = f"{reverse('admin:sessions_app_modechange_changelist')}?session__id__exact={alice_session.pk}"
    assert admin_client.get(url).status_code == 200


def test_the_users_and_the_login_attempts_keep_their_filters(admin_client):
    assert admin_client.get(f"{reverse('admin:auth_user_changelist')}?is_staff__exact=1&groups__id__exact=1").status_code == 200
    attempts = reverse("admin:axes_accessattempt_changelist")
    assert admin_client.get(f"{attempts}?attempt_time__gte=2026-01-01+00%3A00%3A00%2B00%3A00&attempt_time__lt=2027-01-01+00%3A00%3A00%2B00%3A00").status_code == 200
    assert admin_client.get(f"{attempts}?attempt_time__year=2026").status_code == 200
