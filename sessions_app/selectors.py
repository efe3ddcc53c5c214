"""Reads of agent sessions, always scoped to their owner."""

import uuid

from django.contrib.auth import get_user_model
from django.db.models import OuterRef, Subquery

from aptix_site.service_errors import InvalidInput
from modes.models import AgentMode

from .models import AgentSession, ModeChange, ModeChangeConfirmation


class InvalidSessionId(InvalidInput, ValueError):
    field = "sessionId"

    def __init__(self, value):
        super().__init__(f"{value!r} is not a session id; session ids are UUIDs.")


def parse_uuid(text) -> uuid.UUID:
    """A UUID, given as one or as text; ValueError for anything else."""
    return uuid.UUID(str(text))


def parse_session_id(session_id) -> uuid.UUID:
    """A session id, given as a UUID or as text; InvalidSessionId for anything else."""
    try:
        return parse_uuid(session_id)
    except ValueError:
        raise InvalidSessionId(session_id) from None


def get_owned_session(*, session_id, user, with_mode: bool = False) -> AgentSession:
    """
    The user's session; AgentSession.DoesNotExist for anyone else's, exactly as for a missing one. with_mode reads
    its mode and organization with it, for an answer that shows them (an agent's request reads its catalog instead).
    """
    sessions = sessions_of(user=user) if with_mode else AgentSession.objects.filter(owner=user)
    return sessions.get(pk=parse_session_id(session_id))


def sessions_of(*, user):
    """The user's sessions, each with its mode's key and its organization's slug, and none of those rows' other
    fields: a page of 50 would otherwise load and parse 50 whole modes."""
    joined = AgentSession.objects.filter(owner=user).select_related("mode", "org")
    return joined.only(*(field.name for field in AgentSession._meta.concrete_fields), "mode__key", "org__slug")


def mode_changes_of(*, session: AgentSession):
    """
    The session's changes, each with from_mode_key, to_mode_key, changed_by_name and confirmation_channel (where the
    user answered the question, for a change they confirmed). Those are read by subqueries, not joins: once psycopg
    prepares the query, PostgreSQL may plan it for an average session of a few changes, and with joins that plan
    sorts every change of a long session to return a page (benchmarks/RESULTS.md).
    """
    User = get_user_model()
    modes, users = AgentMode._default_manager.order_by(), User._default_manager.order_by()  # one row each: no ordering
    return ModeChange.objects.filter(session=session).annotate(
        from_mode_key=Subquery(modes.filter(pk=OuterRef("from_mode")).values("key")),
        to_mode_key=Subquery(modes.filter(pk=OuterRef("to_mode")).values("key")),
        changed_by_name=Subquery(users.filter(pk=OuterRef("changed_by")).values(User.USERNAME_FIELD)),
        confirmation_channel=Subquery(
            ModeChangeConfirmation.objects.order_by().filter(pk=OuterRef("confirmation")).values("channel")
        ),
    )


def mode_id_at_revision(*, session: AgentSession, revision: int) -> str | None:
    """The id of the mode the session was in while the catalog was at revision; None if it was created after."""
    if session.catalog_revision is not None and session.catalog_revision > revision:
        return None
    changes = ModeChange.objects.filter(session_id=session.pk)
    then = changes.filter(catalog_revision__lte=revision).order_by("-id").values_list("to_mode_id", flat=True)
    first = changes.order_by("id").values_list("from_mode_id", flat=True)
    return then.first() or first.first() or session.mode_id
