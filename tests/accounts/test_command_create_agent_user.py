"""manage.py create_agent_user: a user and an API token for an agent back-end in one step."""

import re
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from accounts.models import ApiToken, Organization, organization_of

from ..conftest import CommitOnceWaitedOn

pytestmark = pytest.mark.django_db


def create_agent_user(*args):
    out, err = StringIO(), StringIO()
    call_command("create_agent_user", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def refusal(*args):
    users, tokens = get_user_model().objects.count(), ApiToken.objects.count()
    with pytest.raises(CommandError) as caught:
        create_agent_user(*args)
    assert (get_user_model().objects.count(), ApiToken.objects.count()) == (users, tokens)
    return str(caught.value)


@pytest.fixture
def acme(db):
    return Organization.objects.create(name="Acme", slug="acme")


def test_prints_a_token_named_agent_that_the_api_accepts(anon_client, acme):
    out, err = create_agent_user("planner", "--organization", "acme")
    assert re.fullmatch(r"[0-9a-f]{64}\n", out)
    assert list(ApiToken.objects.values_list("user__username", "name")) == [("planner", "agent")]
    assert err == "Created user 'planner' in organization 'acme'; it has no password and calls the API with this token:\n"
    response = anon_client.get("/api/modes/", HTTP_AUTHORIZATION=f"Token {out.strip()}")
    assert response.status_code == 200


def test_the_user_is_in_the_organization_and_cannot_log_in_with_a_password(acme):
    create_agent_user("planner", "--organization", "acme")
    user = get_user_model().objects.get(username="planner")
    assert organization_of(user) == acme
    assert not user.has_usable_password()
    assert (user.is_staff, user.is_superuser) == (False, False)


def test_without_an_organization_the_user_belongs_to_none():
    out, err = create_agent_user("planner")
    assert err == "Created user 'planner'; it has no password and calls the API with this token:\n"
    assert organization_of(get_user_model().objects.get(username="planner")) is None


def test_an_existing_user_is_refused_pointing_to_create_token(alice):
    assert refusal("alice") == (
        "A user named 'alice' exists already; 'manage.py create_token alice --name NAME' gives it a new token."
    )


def test_an_unknown_organization_is_refused_listing_the_known_ones(acme):
    assert refusal("planner", "--organization", "acne") == (
        "No organization has the slug 'acne' (there are: acme); add it in the admin first."
    )


def test_the_name_is_normalized_as_django_stores_it_and_the_message_names_the_stored_one():
    # NFKC, as Django normalizes user names: the ligature "ﬁ" is stored as "fi", and create_token must be told "file".
    out, err = create_agent_user("\ufb01le")
    assert err == "Created user 'file'; it has no password and calls the API with this token:\n"
    assert list(ApiToken.objects.values_list("user__username", flat=True)) == ["file"]
    assert refusal("\ufb01le") == (
        "A user named 'file' exists already; 'manage.py create_token file --name NAME' gives it a new token."
    )


def test_a_username_django_would_refuse_is_refused():
    assert refusal("two words") == (
        "Enter a valid username. This value may contain only letters, numbers, and @/./+/-/_ characters."
    )


@pytest.mark.postgres(reason="another connection's uncommitted user, and PostgreSQL's unique index waits")
@pytest.mark.usefixtures("modes_restored_after_flush")
class TestTwoRunsForOneName:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_a_user_created_meanwhile_by_another_run_is_refused_as_existing(self, second_connection):
        # It was an IntegrityError, which manage.py called a connection problem.
        other = second_connection()
        other.execute(
            "INSERT INTO auth_user (username, password, is_superuser, first_name, last_name, email, is_staff, "
            "is_active, date_joined) VALUES ('planner', '!', false, '', '', '', false, true, now())"
        )
        committer = CommitOnceWaitedOn(other)
        with pytest.raises(CommandError) as caught:
            create_agent_user("planner")
        committer.join()
        assert committer.waited  # the race was run: this one waited on the other's row
        assert str(caught.value).startswith("A user named 'planner' exists already;")
        assert not ApiToken.objects.exists()


@pytest.mark.postgres(reason="another connection's uncommitted deletion, and PostgreSQL's row locks")
@pytest.mark.usefixtures("modes_restored_after_flush")
class TestAnOrganizationDeletedMeanwhile:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_is_refused_in_words_creating_nothing(self, second_connection, acme):
        # It was an IntegrityError at commit, which manage.py called a connection problem.
        other = second_connection()
        other.execute("DELETE FROM accounts_organization WHERE id = %s", [acme.pk])
        committer = CommitOnceWaitedOn(other)
        message = refusal("planner", "--organization", "acme")
        committer.join()
        assert committer.waited  # the race was run: the membership waited on the deletion
        assert message == "The organization 'acme' was deleted while the account was being made; nothing was created."
