"""Runs an agent tool as a given user, through the same code path as POST /api/tools/<name>/invoke/."""

import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from rest_framework.exceptions import APIException

from agent_api.services import invoke_tool
from aptix_site.errors import error_message


class Command(BaseCommand):
    help = "Invoke an agent tool and print its JSON envelope."

    def add_arguments(self, parser):
        parser.add_argument("name", help="Tool name, e.g. agent_list_modes.")
        parser.add_argument("--arguments", default=None, help="The tool's arguments as a JSON object.")
        parser.add_argument("--session", default=None, help="Id of one of the user's sessions.")
        parser.add_argument("--conversation", default=None, help="Conversation id passed to the tool.")
        parser.add_argument("--user", required=True, help="Username the tool runs as.")

    def handle(self, *args, name, arguments, session, conversation, user, **options):
        User = get_user_model()
        try:
            account = User.objects.get(**{User.USERNAME_FIELD: user})
        except User.DoesNotExist:
            raise CommandError(f"No user is named {user!r}.") from None
        try:
            result = invoke_tool(
                name=name, arguments=arguments, session_id=session, conversation_id=conversation, user=account
            )
        except APIException as error:
            raise CommandError(error_message(error.detail)) from None
        self.stdout.write(json.dumps(result.as_envelope(), indent=2, ensure_ascii=False))
        if not result.successful:
            raise CommandError(result.error_message)

