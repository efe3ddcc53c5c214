"""The accounts app: organizations, memberships, API tokens and the login lockout."""

from django.apps import AppConfig
from django.conf import settings
from django.db.models.signals import pre_save


class AccountsConfig(AppConfig):
    name = "accounts"

    def ready(self):
        # Imported here: both modules read models (axes' and ours), which exist only once the apps are loaded.
        from axes.signals import user_locked_out

        from .lockout import log_lockout
        from .tokens import revoke_tokens_when_the_password_changes

        user_locked_out.connect(log_lockout, dispatch_uid="accounts.lockout.log_lockout")
        pre_save.connect(
            revoke_tokens_when_the_password_changes,
            sender=settings.AUTH_USER_MODEL,
            dispatch_uid="accounts.revoke_tokens_when_the_password_changes",
        )
