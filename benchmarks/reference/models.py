"""The reference project's own tables: modes, sessions and their mode changes, as a newcomer would model them."""

import uuid

from django.conf import settings
from django.db import models


class Mode(models.Model):
    id = models.CharField(primary_key=True, max_length=32)
    key = models.CharField(max_length=64, unique=True)
    display_name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    when_to_use = models.CharField(max_length=300)
    is_default = models.BooleanField(default=False)
    status = models.CharField(max_length=16, default="active")
    human_role_hints = models.JSONField(default=list)
    example_utterances = models.JSONField(default=list)
    associated_tool_ids = models.JSONField(default=list)
    source = models.CharField(max_length=16, default="builtin")
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["position", "key"]


class Session(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    mode = models.ForeignKey(Mode, on_delete=models.PROTECT)
    title = models.CharField(max_length=200, blank=True)
    updated_at = models.DateTimeField(auto_now=True)


class ModeChange(models.Model):
    session = models.ForeignKey(Session, on_delete=models.PROTECT)
    from_mode = models.ForeignKey(Mode, on_delete=models.PROTECT, related_name="+")
    to_mode = models.ForeignKey(Mode, on_delete=models.PROTECT, related_name="+")
    reason = models.TextField()
    branch = models.BooleanField(default=False)
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    changed_at = models.DateTimeField(auto_now_add=True)
