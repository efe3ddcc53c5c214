"""
Expected answers written out from the contract, for the tests to share: nothing here calls the code
under test.
"""

# The list fields of a mode (AGN-014 §3), in the model's order.
LIST_FIELDS = [
    "mode_instructions",
    "behavior_hints",
    "human_role_hints",
    "example_utterances",
    "associated_tool_ids",
    "tool_group_hints",
    "rag_scope_hints",
    "strong_signals",
    "weak_signals",
]


def tool_error(message):
    """A tool envelope that reports a failure (TUL-011's InvokeResult.FromError)."""
    return {"successful": False, "result": None, "errorMessage": message}


def refusal_at(url, body):
    """
    What a refusal at url looks like, given DRF's usual body for it: that body, except on a tool
    invocation, where every refusal is the envelope with the same words in errorMessage.
    """
    if not (url.startswith("/api/tools/") and url.endswith("/invoke/")):
        return body
    words = []
    for field, messages in body.items():
        messages = [messages] if isinstance(messages, str) else messages
        text = " ".join(messages)
        words.append(text if field in ("detail", "non_field_errors") else f"{field}: {text}")
    return tool_error(" ".join(words))


# The registered tools' TUL-011 schemas, written out from TUL-007 §5.3, TUL-010 §4 and TUL-011 §6.
CHANGE_MODE_SCHEMA = {
    "type": "function",
    "name": "agent_change_mode",
    "description": "Changes the mode for the current agent session to the specified mode string. Call only after "
    "the user confirms a mode change, and provide a short 'reason' describing why this mode fits the current "
    "request. Set branch=true when the user wants the new work to start as a separate session.",
    "parameters": {
        "type": "object",
        "properties": {
            "mode": {"type": "string", "description": "Key of the mode to switch to, e.g. ddr_authoring."},
            "branch": {
                "type": "boolean",
                "description": "false: switch this session; true: switch and start a new session.",
            },
            "reason": {"type": "string", "description": "Short explanation of why this mode fits the user's request."},
        },
        "required": ["mode", "branch", "reason"],
        "additionalProperties": False,
    },
}
HELLO_WORLD_SCHEMA = {
    "type": "function",
    "name": "agent_hello_world",
    "description": "Creates a friendly greeting using the user's name.",
    "parameters": {
        "type": "object",
        "properties": {"name": {"type": "string", "description": "The name of the person to greet."}},
        "required": ["name"],
        "additionalProperties": False,
    },
}
LIST_MODES_SCHEMA = {
    "type": "function",
    "name": "agent_list_modes",
    "description": "Lists the configured agent modes (read-only): key, name, description, when to use, default flag "
    "and role hints; optionally example utterances and a text filter.",
    "parameters": {
        "type": "object",
        "properties": {
            "includeExamples": {
                "type": "boolean",
                "description": "When true, include example user requests for each mode.",
            },
            "filter": {
                "type": "string",
                "description": "Only modes whose key, name, description or when-to-use contains this text "
                "(case-insensitive).",
            },
        },
        "required": [],
        "additionalProperties": False,
    },
}
REGISTRY_SCHEMAS = {schema["name"]: schema for schema in (CHANGE_MODE_SCHEMA, HELLO_WORLD_SCHEMA, LIST_MODES_SCHEMA)}
SEED_MODE_KEYS = ["general", "ddr_authoring", "workflow_authoring"]


def change_mode_schema_in_session(mode_keys):
    """agent_change_mode as a session's context gives it: its mode parameter lists the catalog's keys."""
    properties = CHANGE_MODE_SCHEMA["parameters"]["properties"]
    return {
        **CHANGE_MODE_SCHEMA,
        "parameters": {
            **CHANGE_MODE_SCHEMA["parameters"],
            "properties": {**properties, "mode": {**properties["mode"], "enum": list(mode_keys)}},
        },
    }


def session_schemas(*names, mode_keys=SEED_MODE_KEYS):
    """The registry-format schemas of the named registered tools, sorted by name, as a session's context has them."""
    return [
        change_mode_schema_in_session(mode_keys) if name == "agent_change_mode" else REGISTRY_SCHEMAS[name]
        for name in sorted(names)
    ]


def seed_prompt(current_mode_key):
    """The Mode Catalog block of AGN-014 §6.2 for the seed catalog, written out from the DDR's example."""
    return "\n".join(
        [
            f"Current Mode: {current_mode_key}",
            "",
            "Available Modes:",
            "- general: Use this mode for everyday Q&A, explanation, and lightweight assistance.",
            "- ddr_authoring: Use this mode when the user wants to create, refine, or validate Aptix DDR "
            "specifications following SYS-001.",
            "- workflow_authoring: Use this mode when defining, editing, or validating Aptix workflows using TUL-006.",
            "",
            "Mode Switching:",
            "- If the user’s request clearly matches another mode’s \"when to use\" description, you may recommend "
            "switching.",
            "- If the user expresses interest in switching, follow the instructions in the agent_change_mode tool.",
            "- If you need more detail about modes, call the agent_list_modes tool.",
        ]
    )
