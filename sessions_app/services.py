"""Writes to agent sessions: creating them and changing their mode (the only way a mode changes)."""

from contextlib import contextmanager
from types import SimpleNamespace

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Subquery
from django.utils import timezone

from accounts.models import Membership, Organization
from accounts.services import OrganizationRemoved
from aptix_site.database import foreign_keys_checked_at_each_statement
from modes.catalog import Catalog, ModeBeingRemovedError, Release
from modes.graph import ModeSwitchRefused
from modes.models import AgentMode

from .confirmations import new_confirmation
from .models import AgentSession, ModeChange, ModeChangeConfirmation, ModeChangeRefusal
from .rollout_cohorts import judge_guard_if_due
from .selectors import parse_session_id


def create_session(*, release: Release, owner, org, mode_key: str | None = None, title: str = "") -> AgentSession:
    """
    A new session for owner, in mode_key or else the default mode of the catalog that release serves it (its
    cohort's, while a rollout is in flight). UnknownModeError for a bad key; OrganizationRemoved if a deletion of org
    commits meanwhile.
    """
    session = AgentSession(owner=owner, org=org, title=title)  # its id, which places it in a cohort, is drawn here
    session.catalog_revision = (catalog := release.catalog_for(session)).revision
    session.mode = catalog.mode(mode_key) if mode_key else catalog.default
    if not AgentMode.objects.filter(pk=session.mode_id).exists():
        raise _being_removed(catalog, session.mode)
    with _unless_deleted_meanwhile(catalog, session.mode, org_id=org and org.pk):
        session.save(force_insert=True)
    return session


def set_session_mode(
    *, catalog: Catalog, session_id, mode: AgentMode, reason: str, user, branch: bool = False,
    confirmed_by: str = "model", confirmation: ModeChangeConfirmation | None = None,
) -> ModeChange:
    """
    Move the user's session to mode (of catalog) and audit the change, with the user's organization then, atomically.

    The session row is locked first, so concurrent changes queue: each audit row's from_mode is the mode the session
    really had, and the session ends in the mode of its last audit row. The catalog's mode graph is judged on that
    mode: ModeSwitchRefused, and nothing changes but the refusal's record, for a move it forbids. With branch=True a
    new session in the target mode is created as a child of this one. AgentSession.DoesNotExist for a session that
    is not the user's; ModeBeingRemovedError for a mode whose row a change not yet published has deleted;
    OrganizationRemoved if a deletion of the user's organization commits meanwhile.
    confirmed_by and confirmation record who confirmed the change (sessions_app.confirmations).
    """
    sessions = AgentSession.objects.select_for_update().filter(owner=user).annotate(
        # Read with the lock, in its one query: whether the target's row is there, and the user's organization.
        target_kept=Exists(AgentMode.objects.filter(pk=mode.pk)),
        user_org=Subquery(Membership.objects.filter(user=user).values("organization")[:1]),
    )
    with _unless_deleted_meanwhile(catalog, mode) as named, transaction.atomic():
        session = sessions.get(pk=parse_session_id(session_id))
        named.org_id = session.user_org
        refusal = catalog.switch_refusal(from_mode_id=session.mode_id, target=mode)
        if refusal is None:
            if not session.target_kept:
                raise _being_removed(catalog, mode)
            foreign_keys_checked_at_each_statement()  # the target's deletion, if one is under way, is waited for
            # Never before the session's last change, so that its audit rows are in time order whatever the clocks.
            now = max(timezone.now(), session.updated_at)
            branch_session = AgentSession.objects.create(
                owner=user, org_id=session.org_id, mode=mode, parent=session, title=session.title,
                catalog_revision=catalog.revision, cohort_root=session.cohort_key,  # served its parent's revision
            ) if branch else None
            change = ModeChange.objects.create(
                session=session, from_mode_id=session.mode_id, to_mode=mode, reason=reason, branch=branch,
                branch_session=branch_session, changed_by=user, org_id=session.user_org,
                catalog_revision=catalog.revision, changed_at=now, confirmed_by=confirmed_by, confirmation=confirmation,
            )
            AgentSession.objects.filter(pk=session.pk).update(mode=mode, updated_at=now)
            return change
    # Recorded once the transaction is over, so that raising the refusal does not roll the record back.
    raise _refused(session, mode, refusal, catalog)


def ask_mode_change(
    *, catalog: Catalog, session_id, mode: AgentMode, reason: str, user, branch: bool, channel: str | None
) -> ModeChangeConfirmation | None:
    """
    The question that asks the user to confirm moving their session to mode, once the mode graph allows the move
    (ModeSwitchRefused, recorded as set_session_mode records it, if not); None if no channel can ask them (channel
    None), so that a refusal, which needs no question, is what any client is told. Nothing is locked while a person
    thinks: their answer is judged again when it comes (sessions_app.tools.answer_mode_change).
    """
    last_change = ModeChange.objects.filter(session=OuterRef("pk")).order_by("-id").values("id")[:1]
    sessions = AgentSession.objects.filter(owner=user).only("pk", "mode_id").annotate(last_change=Subquery(last_change))
    session = sessions.get(pk=parse_session_id(session_id))
    if refusal := catalog.switch_refusal(from_mode_id=session.mode_id, target=mode):
        raise _refused(session, mode, refusal, catalog)
    if channel is None:
        return None
    return new_confirmation(
        session=session, target=mode, reason=reason, branch=branch, channel=channel, catalog_revision=catalog.revision
    )


def _refused(session: AgentSession, mode: AgentMode, refusal: ModeSwitchRefused, catalog: Catalog) -> ModeSwitchRefused:
    ModeChangeRefusal.objects.create(
        session_id=session.pk, from_mode_id=session.mode_id, to_mode_id=mode.pk, catalog_revision=catalog.revision
    )
    # A refusal feeds a rollout's guard: judged once the write is committed, not inside a caller's transaction (an
    # answer's), which would lock the rollout's row before the head's, as promote and abort do the other way round.
    transaction.on_commit(judge_guard_if_due)
    return refusal


@contextmanager
def _unless_deleted_meanwhile(catalog: Catalog, mode: AgentMode, *, org_id: int | None = None):
    """
    Writes naming mode and an organization (org_id, or the one the block sets as named.org_id once it knows it), which
    the database refuses once a deletion of either commits meanwhile: ModeBeingRemovedError, or OrganizationRemoved.
    """
    named = SimpleNamespace(org_id=org_id)
    try:
        yield named
    except IntegrityError:
        if not AgentMode.objects.filter(pk=mode.pk).exists():
            raise _being_removed(catalog, mode) from None
        # The foreign key's check waited for the deletion, which holds the organization's row, and failed once done.
        if named.org_id is not None and not Organization.objects.filter(pk=named.org_id).exists():
            raise OrganizationRemoved() from None
        raise


def _being_removed(catalog: Catalog, mode: AgentMode) -> ModeBeingRemovedError:
    kept = set(AgentMode.objects.filter(pk__in=catalog.by_id).values_list("pk", flat=True))
    return ModeBeingRemovedError(mode.key, [key for key, each in catalog.by_key.items() if each.pk in kept])
