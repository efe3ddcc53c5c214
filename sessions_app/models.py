"""
Agent sessions, the append-only audit of their mode changes (TUL-007), the questions that asked the user to confirm
one (issue 40), the switches the mode graph refused (issue 29), and the hourly sums of the audit that
GET /api/catalog/transitions/ reads (sessions_app.transitions).
"""

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from accounts.models import Organization
from modes.models import AgentMode


class AgentSession(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Indexed by session_owner_created, which leads with it.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="agent_sessions", db_index=False
    )
    org = models.ForeignKey(Organization, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # The session stores the mode's id (AGN-014 §6.3); a mode in use cannot be deleted.
    # Indexed in Meta: a plain index, without the second (LIKE) one Django adds for a text key's own index.
    mode = models.ForeignKey(AgentMode, on_delete=models.PROTECT, related_name="sessions", db_index=False)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="branches",
        help_text="The session this one branched from with agent_change_mode (branch=true).",
    )
    title = models.CharField(max_length=200, blank=True)
    catalog_revision = models.PositiveIntegerField(
        null=True, blank=True, help_text="The catalog revision in force when the session was created."
    )
    # A rollout serves a session by the bucket of an id: its own, or for a branch its root's, so that a branch is
    # served its parent's revision (modes.rollouts).
    cohort_root = models.UUIDField(
        null=True, blank=True, editable=False, help_text="For a branch: the session whose cohort it shares."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # A user's sessions, newest first, a page at a time (GET /api/sessions/); and everyone's, in the admin.
            models.Index(fields=["owner", "created_at"], name="session_owner_created"),
            models.Index(fields=["created_at"], name="session_created"),
            models.Index(fields=["mode"], name="session_mode"),
        ]

    def __str__(self):
        return self.title or str(self.id)

    @property
    def cohort_key(self) -> uuid.UUID:
        """The id whose bucket places the session in a rollout's cohort, or not."""
        return self.cohort_root or self.id


class ConfirmationChannel(models.TextChoices):  # ModeChangeConfirmation.Channel; a class of its own for the schema
    MCP = "mcp", "MCP"
    REST = "rest", "REST"


class ConfirmedBy(models.TextChoices):  # ModeChange.ConfirmedBy, as sessions_app.confirmations.who_confirms says
    USER = "user", "User"
    MODEL = "model", "Model"
    NONE = "none", "None needed"


class ModeChangeConfirmation(models.Model):
    """
    A question that asked the user to confirm a switch the model proposed (TUL-007 §4.1), and their answer. Answered
    once: a second answer is refused. stay, decline and cancel are declined proposals, which the transition counts show.
    """

    class Choice(models.TextChoices):
        STAY = "stay"
        SWITCH = "switch"
        BRANCH = "branch"
        DECLINE = "decline"  # the MCP client's person declined the form
        CANCEL = "cancel"  # or dismissed it

    Channel = ConfirmationChannel

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="+")
    channel = models.CharField(max_length=8, choices=Channel.choices)
    # Ids, as a refusal keeps them: the modes of the proposal, which an answer judges again.
    from_mode_id = models.CharField(max_length=32, help_text="The id of the mode the session was in.")
    to_mode_id = models.CharField(max_length=32, help_text="The id of the mode the model proposed.")
    reason = models.TextField(help_text="The model's reason for the switch.")
    branch = models.BooleanField(help_text="Whether the model proposed a new session; the user's choice decides.")
    question = models.TextField()
    asked_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    catalog_revision = models.PositiveIntegerField(
        null=True, blank=True, help_text="The catalog revision the question was asked under."
    )
    # A mode change's id, not a time: ids are given in the order changes are written, whatever the hosts' clocks.
    after_change = models.BigIntegerField(
        null=True, blank=True, editable=False,
        help_text="The id of the session's last mode change when the question was asked; none if it had none.",
    )
    choice = models.CharField(max_length=8, choices=Choice.choices, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["asked_at"]
        # A period's declined proposals per pair, read from the index.
        indexes = [models.Index(fields=["answered_at", "from_mode_id", "to_mode_id"], name="confirmation_answered")]

    def __str__(self):
        return f"{self.from_mode_id} → {self.to_mode_id}?"


class ModeChange(models.Model):
    """
    One row per mode change; rows are only ever added. Every reference is PROTECT: deleting a session, mode, user
    or organization that the audit names is refused rather than erasing or blanking the record.
    """

    ConfirmedBy = ConfirmedBy

    # Indexed by modechange_session_id, which leads with it.
    session = models.ForeignKey(AgentSession, on_delete=models.PROTECT, related_name="mode_changes", db_index=False)
    # Indexed in Meta, as AgentSession.mode is.
    from_mode = models.ForeignKey(AgentMode, on_delete=models.PROTECT, related_name="+", db_index=False)
    to_mode = models.ForeignKey(AgentMode, on_delete=models.PROTECT, related_name="+", db_index=False)
    reason = models.TextField()
    branch = models.BooleanField(default=False)
    branch_session = models.ForeignKey(AgentSession, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    org = models.ForeignKey(Organization, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    catalog_revision = models.PositiveIntegerField(
        null=True, blank=True, help_text="The catalog revision in force when the mode changed."
    )
    # Given by set_session_mode: never before the session's last change, whichever host's clock made that one.
    changed_at = models.DateTimeField(default=timezone.now)
    confirmed_by = models.CharField(
        max_length=8, choices=ConfirmedBy.choices, default=ConfirmedBy.MODEL.value,
        help_text="Who confirmed the change: the user (answering confirmation), the model's call, or nobody (a mode "
        "whose entry_confirmation is none).",
    )
    confirmation = models.ForeignKey(
        ModeChangeConfirmation, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        ordering = ["id"]  # insertion order: ids are taken under the session lock
        indexes = [
            # A session's changes in order, a page at a time, from either end (the API, the admin's latest).
            models.Index(fields=["session", "id"], name="modechange_session_id"),
            # A mode's deletion looks for the rows that name it (PROTECT).
            models.Index(fields=["from_mode"], name="modechange_from_mode"),
            models.Index(fields=["to_mode"], name="modechange_to_mode"),
            # The changes of a period per pair of modes, for the transition counts (sessions_app.transitions), read
            # from the index alone.
            models.Index(fields=["changed_at", "from_mode", "to_mode", "branch"], name="modechange_changed_at"),
        ]

    def __str__(self):
        return f"{self.from_mode} → {self.to_mode}"


class ModeChangeRefusal(models.Model):
    """
    A switch agent_change_mode asked for and the mode graph refused; rows are only ever added. The modes are
    kept as ids, not references: a refusal is a count for admins, never a reason to keep a mode from deletion.
    """

    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="+")
    from_mode_id = models.CharField(max_length=32, help_text="The id of the mode the session was in.")
    to_mode_id = models.CharField(max_length=32, help_text="The id of the mode the model asked for.")
    catalog_revision = models.PositiveIntegerField(
        null=True, blank=True, help_text="The catalog revision whose mode graph refused it."
    )
    refused_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        # A period's refusals per pair, read from the index alone.
        indexes = [models.Index(fields=["refused_at", "from_mode_id", "to_mode_id"], name="refusal_at_modes")]

    def __str__(self):
        return f"{self.from_mode_id} ↛ {self.to_mode_id}"


class TransitionHour(models.Model):
    """The mode changes of one hour from one mode to another under one revision: the audit trail summed, once an hour."""

    hour = models.DateTimeField()
    from_mode_id = models.CharField(max_length=32)
    to_mode_id = models.CharField(max_length=32)
    catalog_revision = models.PositiveIntegerField(null=True, blank=True)
    count = models.PositiveIntegerField()
    branches = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["hour", "from_mode_id", "to_mode_id", "catalog_revision"], name="transitionhour_pair"
            ),
        ]


class TransitionRollup(models.Model):
    """One row (id 1): TransitionHour sums the audit trail up to `through`, not including it."""

    through = models.DateTimeField(null=True, help_text="Empty: nothing summed yet.")
