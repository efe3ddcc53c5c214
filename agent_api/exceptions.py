"""Refusals of the agent API's services, answered by each way of serving (aptix_site.service_errors)."""

from aptix_site.service_errors import Conflict, InvalidInput, NotAllowed, NotFound


class ToolNotEnabled(NotAllowed):
    def __init__(self, *, mode_key: str, tool_name: str):
        super().__init__(f"Mode {mode_key!r} of this session does not enable the tool {tool_name!r}.")


class ToolExecutedByClient(Conflict):
    def __init__(self, tool_name: str):
        super().__init__(
            f"The tool {tool_name!r} is executed by the agent's client, not by this service: "
            "run it in the client and give the model its result."
        )


class ArgumentsNotAnObject(InvalidInput):
    field = "arguments"
    message = "Must be a JSON object, or a string holding a JSON object."


class SessionNotAtRevision(NotFound):
    def __init__(self, *, session_id, revision: int):
        super().__init__(f"Session {session_id} was created after catalog revision {revision}.")


class RevisionNotPublished(NotAllowed):
    def __init__(self, revision: int):
        super().__init__(
            f"Catalog revision {revision} was never published; "
            "only staff who may view catalog revisions may preview it."
        )
