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
    invocation or a confirmation's answer, where every refusal is the envelope with the same words in errorMessage.
    """
    if not (url.startswith("/api/tools/") and url.endswith("/invoke/") or "/confirmations/" in url):
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
# The change-mode tool's guidance for the model, TUL-007 §5.2 verbatim.
CHANGE_MODE_USAGE_METADATA = (
    "Use this tool to change the current agent session mode, but only after the user "
    "has explicitly agreed to switch. First, propose a specific target mode and ask "
    "whether the user wants to (1) stay in the current mode, (2) switch this session "
    "to that mode, or (3) switch and start a new session. "
    "Call this tool only for options (2) or (3): use branch=false for switching the "
    "current session, and branch=true when the user wants to switch and start a new session."
)
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
    """The Mode Catalog block of AGN-014 §6.2 for the seed catalog: the DDR's example, with this current mode."""
    return prompt_with(current_mode_key, *SEED_WHEN_TO_USE)


def seed_instructions(key):
    """What a seed mode tells the model beside the Mode Catalog block (modeInstructions): its instruction lines."""
    return "\n".join(SEED_MODES[key]["modeInstructions"])


def seed_mcp_instructions(key):
    """MCP's instructions for a session in a seed mode: the mode's own, a blank line, the Mode Catalog block."""
    return f"{seed_instructions(key)}\n\n{seed_prompt(key)}"


def prompt_with(current_mode_key, *modes):
    """
    The Mode Catalog block of AGN-014 §6.2 for a catalog whose modes are given as (key, when-to-use) pairs, in
    catalog order: for tests that add, move or edit modes.
    """
    return "\n".join(
        [
            f"Current Mode: {current_mode_key}",
            "",
            "Available Modes:",
            *(f"- {key}: {when_to_use}" for key, when_to_use in modes),
            "",
            "Mode Switching:",
            "- If the user’s request clearly matches another mode’s \"when to use\" description, you may recommend "
            "switching.",
            "- If the user expresses interest in switching, follow the instructions in the agent_change_mode tool.",
            "- If you need more detail about modes, call the agent_list_modes tool.",
        ]
    )


# The seed modes' ids (AGN-014 §8).
GENERAL_ID = "3F8E4F377F7A4C189C7F6A8B9F945C11"
DDR_ID = "A9E1F9C15A0C4F8D9AF51F3E8B2A6D22"
WORKFLOW_ID = "0FB81E6A8337444BA00A0CE28E3A1F78"

# The three seed modes of AGN-014 §8 (ids, keys, names, descriptions, when-to-use sentences, defaults, tools) as
# GET /api/modes/<key>/ gives them, less createdAt and updatedAt; the fields AGN-014 leaves open are the seed
# migration's (modes/migrations/0002_seed_v1_modes.py), copied here by hand.
SEED_MODES = {
    "general": {
        "id": GENERAL_ID,
        "key": "general",
        "displayName": "General",
        "description": "General-purpose assistance for everyday Q&A, explanation, and lightweight help.",
        "whenToUse": "Use this mode for everyday Q&A, explanation, and lightweight assistance.",
        "isDefault": True,
        "status": "active",
        "version": "v1",
        "source": "builtin",
        "position": 1,
        "modeInstructions": [
            "Answer clearly and concisely, in plain language.",
            "Ask a clarifying question when the request is ambiguous.",
            "If the request clearly belongs to another mode, offer to switch instead of switching.",
        ],
        "behaviorHints": ["preferConciseAnswers"],
        "humanRoleHints": ["Asking quick questions", "Looking for explanations or summaries"],
        "exampleUtterances": [
            "What is the difference between a workflow and a DDR?",
            "Summarize this paragraph for me.",
            "Explain how the agent decides which tools to use.",
        ],
        "associatedToolIds": ["agent_change_mode", "agent_list_modes", "agent_workflow_registry", "agent_hello_world"],
        "toolGroupHints": ["general"],
        "ragScopeHints": ["prefer:general-knowledge"],
        "strongSignals": ["explain", "what is", "how does", "summarize"],
        "weakSignals": ["question", "help"],
        "switchTargets": [],
        "llmCanEnter": True,
        "entryConfirmation": "inherit",
        "prompt": "",
        "customInstructions": "",
    },
    "ddr_authoring": {
        "id": DDR_ID,
        "key": "ddr_authoring",
        "displayName": "DDR Authoring",
        "description": "Structured creation, refinement, and validation of Aptix DDR specifications following SYS-001.",
        "whenToUse": "Use this mode when the user wants to create, refine, or validate Aptix DDR specifications "
        "following SYS-001.",
        "isDefault": False,
        "status": "active",
        "version": "v1",
        "source": "builtin",
        "position": 2,
        "modeInstructions": [
            "Follow the SYS-001 structure for every DDR: identity, purpose, scope, contract, tests.",
            "Keep normative statements precise and use MUST, SHOULD and MAY deliberately.",
            "Point out missing sections, ambiguous rules and untestable requirements.",
        ],
        "behaviorHints": ["preferStructuredOutput", "avoidDestructiveTools"],
        "humanRoleHints": ["Architect writing a design record", "Reviewer validating a specification"],
        "exampleUtterances": [
            "Help me write a DDR for the session storage service.",
            "Review TUL-007 for gaps against SYS-001.",
            "Turn these notes into a DDR draft.",
        ],
        "associatedToolIds": ["agent_change_mode", "agent_list_modes", "agent_workflow_registry", "agent_ddr_manager"],
        "toolGroupHints": ["ddr"],
        "ragScopeHints": ["prefer:ddr-specifications", "prefer:SYS-001"],
        "strongSignals": ["DDR", "design record", "SYS-001", "specification"],
        "weakSignals": ["spec", "requirements", "approval"],
        "switchTargets": [],
        "llmCanEnter": True,
        "entryConfirmation": "inherit",
        "prompt": "",
        "customInstructions": "",
    },
    "workflow_authoring": {
        "id": WORKFLOW_ID,
        "key": "workflow_authoring",
        "displayName": "Workflow Authoring",
        "description": "Creation, refinement, and validation of Aptix agent workflows using the Workflow Registry Tool "
        "(TUL-006).",
        "whenToUse": "Use this mode when defining, editing, or validating Aptix workflows using TUL-006.",
        "isDefault": False,
        "status": "active",
        "version": "v1",
        "source": "builtin",
        "position": 3,
        "modeInstructions": [
            "Model each workflow as named steps with clear inputs, outputs and transitions.",
            "Check every workflow against the TUL-006 rules before proposing to save it.",
            "Confirm with the user before registering or changing a workflow.",
        ],
        "behaviorHints": ["preferStructuredOutput", "confirmBeforeWrites"],
        "humanRoleHints": ["Process designer defining an agent workflow", "Operator adjusting an existing workflow"],
        "exampleUtterances": [
            "Create a workflow that triages incoming support tickets.",
            "Add an approval step to the onboarding workflow.",
            "Validate my workflow definition against TUL-006.",
        ],
        "associatedToolIds": [
            "agent_change_mode",
            "agent_list_modes",
            "agent_workflow_registry",
            "agent_workflow_authoring",
        ],
        "toolGroupHints": ["workflow"],
        "ragScopeHints": ["prefer:workflow-definitions", "prefer:TUL-006"],
        "strongSignals": ["workflow", "TUL-006", "step", "transition"],
        "weakSignals": ["process", "automation", "pipeline"],
        "switchTargets": [],
        "llmCanEnter": True,
        "entryConfirmation": "inherit",
        "prompt": "",
        "customInstructions": "",
    },
}
SEED_WHEN_TO_USE = [(key, mode["whenToUse"]) for key, mode in SEED_MODES.items()]

# The revision the seed migration records (a fresh test database has no other); the first change made in a test is
# the next one.
SEED_REVISION = 1


def listed(mode, *, include_examples=False):
    """
    A mode as agent_list_modes and GET /api/modes/ list it (TUL-010 §3.3 in camelCase, plus source and status),
    given the mode as SEED_MODES has it: the description falls back to the when-to-use sentence, and the
    system-prompt summary is that sentence (AGN-014 §4).
    """
    return {
        "id": mode["id"],
        "key": mode["key"],
        "displayName": mode["displayName"],
        "description": mode["description"] or mode["whenToUse"],
        "systemPromptSummary": mode["whenToUse"],
        "isDefault": mode["isDefault"],
        "humanRoleHints": mode["humanRoleHints"],
        "exampleUtterances": mode["exampleUtterances"] if include_examples else [],
        "source": mode["source"],
        "status": mode["status"],
        "switchTargets": mode["switchTargets"],
        "llmCanEnter": mode["llmCanEnter"],
    }


def listing(*modes, include_examples=False, catalog_revision=SEED_REVISION):
    """The agent_list_modes payload of TUL-010 §3.3 for these modes (SEED_MODES' shape), in this order."""
    return {
        "modes": [listed(mode, include_examples=include_examples) for mode in modes],
        "catalogRevision": catalog_revision,
    }


def seed_listing(*keys, include_examples=False, catalog_revision=SEED_REVISION):
    """The agent_list_modes payload for the seed modes named (all three when none is), in catalog order."""
    keys = keys or SEED_MODE_KEYS
    return listing(
        *(SEED_MODES[key] for key in SEED_MODE_KEYS if key in keys),
        include_examples=include_examples,
        catalog_revision=catalog_revision,
    )


def change_mode_result(mode, *, branch, reason, branch_session_id=None):
    """
    agent_change_mode's result on success (TUL-007 §3.6): success, then the mode, branch and reason it was given;
    a branch also names the new session (branchSessionId).
    """
    result = {"success": True, "mode": mode, "branch": branch, "reason": reason}
    if branch_session_id is not None:
        result["branchSessionId"] = str(branch_session_id)
    return result


def hello_result(name, *, session_id=None, conversation_id=None):
    """agent_hello_world's result on success (TUL-011 §6): the greeting, and the ids of the call's context."""
    return {"message": f"Hello, {name}! Welcome to Aptix.", "conversationId": conversation_id, "sessionId": session_id}


# The Markdown listing of list-modes-tool-architecture.md for the seed catalog, as `list_modes --format markdown`
# prints it (before its final line break) and the MCP resource modes://catalog serves it: its built-in section,
# then the whole listing.
SEED_MARKDOWN_BUILTIN = """\
# Available Modes

## Built-in Modes

### General (general)
- **When to Use**: Use this mode for everyday Q&A, explanation, and lightweight assistance.
- **Tools**: agent_change_mode, agent_list_modes, agent_workflow_registry, agent_hello_world
- **Status**: active (default)

### DDR Authoring (ddr_authoring)
- **When to Use**: Use this mode when the user wants to create, refine, or validate Aptix DDR specifications \
following SYS-001.
- **Tools**: agent_change_mode, agent_list_modes, agent_workflow_registry, agent_ddr_manager
- **Status**: active

### Workflow Authoring (workflow_authoring)
- **When to Use**: Use this mode when defining, editing, or validating Aptix workflows using TUL-006.
- **Tools**: agent_change_mode, agent_list_modes, agent_workflow_registry, agent_workflow_authoring
- **Status**: active
"""
SEED_MARKDOWN = SEED_MARKDOWN_BUILTIN + "\n## Custom Modes\n\n_None._\n\nTotal: 3 modes (3 built-in, 0 custom)"
