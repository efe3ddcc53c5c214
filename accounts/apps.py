"""The accounts app: organizations, API tokens and the login lockout, whose log line is connected at start."""

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self):
        # Imported here: the lockout module reads axes' models, which exist only once the apps are loaded.
        from axes.signals import user_locked_out

        from .lockout import log_lockout

        user_locked_out.connect(log_lockout, dispatch_uid="accounts.lockout.log_lockout")
