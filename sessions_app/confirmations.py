"""
The user's own confirmation of a mode change (TUL-007 §4.1 and §4.3, issue 40): who must confirm a switch into a
mode, the question the server asks in their name, and taking their answer, once. sessions_app.tools asks and acts
on the answer; REST (agent_api) and MCP (mcp_server) carry the question and the answer.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from aptix_site.service_errors import Conflict, Expired, NotFound
from modes.models import AgentMode

from .models import ModeChange, ModeChangeConfirmation
from .selectors import parse_uuid

QUESTION_LIFETIME = timedelta(minutes=10)
CHOICES = ("stay", "switch", "branch")
WAITING = "Waiting for the user to confirm this mode change."
STAYED = "The user chose to stay in the current mode."
DECLINED = {"stay", "decline", "cancel"}


class ConfirmationNotFound(NotFound):
    """A confirmation that is not one of this session's (another user's session is not found at all)."""

    def __init__(self, confirmation_id, session_id):
        super().__init__(f"No confirmation {confirmation_id} was found for session {session_id}.")


class ConfirmationAnswered(Conflict):
    def __init__(self, confirmation: ModeChangeConfirmation):
        super().__init__(
            f"Confirmation {confirmation.pk} was answered already ({confirmation.choice}); an answer is taken once. "
            "Call agent_change_mode again to ask anew."
        )


class ConfirmationExpired(Expired):
    def __init__(self, confirmation: ModeChangeConfirmation):
        super().__init__(
            f"Confirmation {confirmation.pk} expired at {confirmation.expires_at.isoformat()}, unanswered; nothing "
            "changed. Call agent_change_mode again to ask anew."
        )


class ConfirmationElsewhere(Conflict):
    def __init__(self, confirmation: ModeChangeConfirmation):
        super().__init__(
            f"Confirmation {confirmation.pk} was asked over {confirmation.get_channel_display()}: answer it there, "
            "where the question was put to the user. Nothing changed."
        )


class ConfirmationOutdated(Conflict):
    def __init__(self, confirmation: ModeChangeConfirmation):
        super().__init__(
            f"Confirmation {confirmation.pk} asked about leaving a mode that the session has left since; nothing "
            "changed. Call agent_change_mode again to ask anew."
        )


def who_confirms(mode: AgentMode) -> str:
    """
    Who confirms a switch into mode, as ModeChange.confirmed_by records it: user, model or none. Anything but the
    values that spare the question (a value modes.E011 reports) asks it: never a change unasked by mistake.
    """
    if mode.entry_confirmation == AgentMode.EntryConfirmation.NONE:
        return "none"
    inherits = mode.entry_confirmation == AgentMode.EntryConfirmation.INHERIT
    return "model" if inherits and settings.MODE_CHANGE_CONFIRMATION == "model" else "user"


def has_expired(*, expires_at: datetime) -> bool:
    """Whether a question that expires at expires_at is past answering: the rule for its row, and for an MCP
    requestState, which carries the instant."""
    return expires_at <= timezone.now()


def question_text(display_name: str) -> str:
    """TUL-007 §4.1's question, for a switch to the mode of this display name."""
    return "\n".join((
        f"It seems like what you are asking for would be better served by **{display_name}** mode.",
        "Would you like to:",
        "1) Stay in the current mode,",
        f"2) Switch this session to **{display_name}**, or",
        f"3) Switch to **{display_name}** and start a new session for this work?",
    ))


def new_confirmation(
    *, session, target: AgentMode, reason: str, branch: bool, channel: str, catalog_revision: int | None
) -> ModeChangeConfirmation:
    """The question about moving session to target; session comes with its last_change (services.ask_mode_change)."""
    return ModeChangeConfirmation.objects.create(
        session=session, channel=channel, from_mode_id=session.mode_id, to_mode_id=target.pk, reason=reason,
        branch=branch, question=question_text(target.display_name), expires_at=timezone.now() + QUESTION_LIFETIME,
        catalog_revision=catalog_revision, after_change=session.last_change,
    )


def confirmation_payload(confirmation: ModeChangeConfirmation) -> dict:
    """What a client shows the person: the question, the choices, until when it may be answered (REST's shape of it:
    agent_api.serializers.ConfirmationResponse)."""
    return {
        "id": str(confirmation.pk), "question": confirmation.question, "choices": list(CHOICES),
        "expires_at": confirmation.expires_at,
    }


def pending_confirmation(*, confirmation_id, session_id, user, channel: str) -> ModeChangeConfirmation:
    """
    The user's unanswered question, asked over channel, with its session: both rows locked until the transaction this
    runs in ends, so that two answers sent at once are taken one after the other and the session keeps its mode
    meanwhile. ConfirmationNotFound, ConfirmationAnswered or ConfirmationExpired otherwise; ConfirmationElsewhere
    for one asked over another channel (whose answer has its own checks: MCP binds it to the call); and
    ConfirmationOutdated for one about leaving a mode the session has left since (the person never saw that switch).
    """
    try:
        confirmation = ModeChangeConfirmation.objects.select_for_update().select_related("session").get(
            pk=parse_uuid(confirmation_id), session_id=parse_uuid(session_id), session__owner=user
        )
    except (ValueError, ModeChangeConfirmation.DoesNotExist):
        raise ConfirmationNotFound(confirmation_id, session_id) from None
    if confirmation.answered_at is not None:
        raise ConfirmationAnswered(confirmation)
    if has_expired(expires_at=confirmation.expires_at):
        raise ConfirmationExpired(confirmation)
    if confirmation.channel != channel:
        raise ConfirmationElsewhere(confirmation)
    if _left_since_asked(confirmation):
        raise ConfirmationOutdated(confirmation)
    return confirmation


def _left_since_asked(confirmation: ModeChangeConfirmation) -> bool:
    """Whether the session changed mode after the question was asked, even back to the mode it asked about leaving."""
    later = ModeChange.objects.filter(session_id=confirmation.session_id, id__gt=confirmation.after_change or 0)
    return confirmation.session.mode_id != confirmation.from_mode_id or later.exists()  # (session, id)'s index


def record_answer(confirmation: ModeChangeConfirmation, choice: str) -> None:
    confirmation.choice, confirmation.answered_at = choice, timezone.now()
    confirmation.save(update_fields=["choice", "answered_at"])
