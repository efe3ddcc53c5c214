"""Runs an agent tool as a given user, through the same code path as POST /api/tools/<name>/invoke/."""

import json

from django.core.management.base import CommandError

from accounts.management.users import acting_user
from agent_api.serializers import InvocationResponse
from agent_api.services import invocation_session, invoke_tool
from aptix_site.commands import ServiceCommand
from modes.catalog import published_release


class Command(ServiceCommand):
    help = "Invoke an agent tool and print its JSON envelope."

    def add_arguments(self, parser):
        parser.add_argument("name", help="Tool name, e.g. agent_list_modes.")
        parser.add_argument("--arguments", default=None, help="The tool's arguments as a JSON object.")
        parser.add_argument("--session", default=None, help="Id of one of the user's sessions.")
        parser.add_argument("--conversation", default=None, help="Conversation id passed to the tool.")
        parser.add_argument("--user", required=True, help="Username the tool runs as.")

    def handle(self, *args, name, arguments, session, conversation, user, **options):
        account = acting_user(username=user)
        served = invocation_session(session_id=session, user=account)
        result = invoke_tool(
            load_catalog=lambda: published_release().catalog_for(served),
            name=name,
            arguments=arguments,
            session=served,
            conversation_id=conversation,
            user=account,
        )
        self.stdout.write(json.dumps(InvocationResponse(result).data, indent=2, ensure_ascii=False))
        if not result.successful:
            raise CommandError(result.error_message)

