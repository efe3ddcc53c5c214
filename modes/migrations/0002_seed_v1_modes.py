"""
Writes the three V1 modes of AGN-014 §8 with their fixed ids.

The data is inline on purpose: this migration must keep writing the same rows
whatever the app code becomes. A seed whose id or key is already present is
left alone, so running this again never overwrites an admin's edits.
"""

from django.db import migrations

SEED_MODES = [
    {
        "id": "3F8E4F377F7A4C189C7F6A8B9F945C11",
        "key": "general",
        "display_name": "General",
        "description": "General-purpose assistance for everyday Q&A, explanation, and lightweight help.",
        "when_to_use": "Use this mode for everyday Q&A, explanation, and lightweight assistance.",
        "is_default": True,
        "status": "active",
        "version": "v1",
        "position": 1,
        "mode_instructions": [
            "Answer clearly and concisely, in plain language.",
            "Ask a clarifying question when the request is ambiguous.",
            "If the request clearly belongs to another mode, offer to switch instead of switching.",
        ],
        "behavior_hints": ["preferConciseAnswers"],
        "human_role_hints": [
            "Asking quick questions",
            "Looking for explanations or summaries",
        ],
        "example_utterances": [
            "What is the difference between a workflow and a DDR?",
            "Summarize this paragraph for me.",
            "Explain how the agent decides which tools to use.",
        ],
        "associated_tool_ids": [
            "agent_change_mode",
            "agent_list_modes",
            "agent_workflow_registry",
            "agent_hello_world",
        ],
        "tool_group_hints": ["general"],
        "rag_scope_hints": ["prefer:general-knowledge"],
        "strong_signals": ["explain", "what is", "how does", "summarize"],
        "weak_signals": ["question", "help"],
    },
    {
        "id": "A9E1F9C15A0C4F8D9AF51F3E8B2A6D22",
        "key": "ddr_authoring",
        "display_name": "DDR Authoring",
        "description": "Structured creation, refinement, and validation of Aptix DDR specifications "
        "following SYS-001.",
        "when_to_use": "Use this mode when the user wants to create, refine, or validate Aptix DDR "
        "specifications following SYS-001.",
        "is_default": False,
        "status": "active",
        "version": "v1",
        "position": 2,
        "mode_instructions": [
            "Follow the SYS-001 structure for every DDR: identity, purpose, scope, contract, tests.",
            "Keep normative statements precise and use MUST, SHOULD and MAY deliberately.",
            "Point out missing sections, ambiguous rules and untestable requirements.",
        ],
        "behavior_hints": ["preferStructuredOutput", "avoidDestructiveTools"],
        "human_role_hints": [
            "Architect writing a design record",
            "Reviewer validating a specification",
        ],
        "example_utterances": [
            "Help me write a DDR for the session storage service.",
            "Review TUL-007 for gaps against SYS-001.",
            "Turn these notes into a DDR draft.",
        ],
        "associated_tool_ids": [
            "agent_change_mode",
            "agent_list_modes",
            "agent_workflow_registry",
            "agent_ddr_manager",
        ],
        "tool_group_hints": ["ddr"],
        "rag_scope_hints": ["prefer:ddr-specifications", "prefer:SYS-001"],
        "strong_signals": ["DDR", "design record", "SYS-001", "specification"],
        "weak_signals": ["spec", "requirements", "approval"],
    },
    {
        "id": "0FB81E6A8337444BA00A0CE28E3A1F78",
        "key": "workflow_authoring",
        "display_name": "Workflow Authoring",
        "description": "Creation, refinement, and validation of Aptix agent workflows using the "
        "Workflow Registry Tool (TUL-006).",
        "when_to_use": "Use this mode when defining, editing, or validating Aptix workflows using TUL-006.",
        "is_default": False,
        "status": "active",
        "version": "v1",
        "position": 3,
        "mode_instructions": [
            "Model each workflow as named steps with clear inputs, outputs and transitions.",
            "Check every workflow against the TUL-006 rules before proposing to save it.",
            "Confirm with the user before registering or changing a workflow.",
        ],
        "behavior_hints": ["preferStructuredOutput", "confirmBeforeWrites"],
        "human_role_hints": [
            "Process designer defining an agent workflow",
            "Operator adjusting an existing workflow",
        ],
        "example_utterances": [
            "Create a workflow that triages incoming support tickets.",
            "Add an approval step to the onboarding workflow.",
            "Validate my workflow definition against TUL-006.",
        ],
        "associated_tool_ids": [
            "agent_change_mode",
            "agent_list_modes",
            "agent_workflow_registry",
            "agent_workflow_authoring",
        ],
        "tool_group_hints": ["workflow"],
        "rag_scope_hints": ["prefer:workflow-definitions", "prefer:TUL-006"],
        "strong_signals": ["workflow", "TUL-006", "step", "transition"],
        "weak_signals": ["process", "automation", "pipeline"],
    },
]


def add_seed_modes(apps, schema_editor):
    AgentMode = apps.get_model("modes", "AgentMode")
    modes = AgentMode.objects.using(schema_editor.connection.alias)
    has_default = modes.filter(is_default=True).exists()
    for seed in SEED_MODES:
        if modes.filter(id=seed["id"]).exists() or modes.filter(key=seed["key"]).exists():
            continue
        fields = dict(seed, source="builtin")
        fields["is_default"] = seed["is_default"] and not has_default
        modes.create(**fields)


def remove_seed_modes(apps, schema_editor):
    AgentMode = apps.get_model("modes", "AgentMode")
    AgentMode.objects.using(schema_editor.connection.alias).filter(
        id__in=[seed["id"] for seed in SEED_MODES], source="builtin"
    ).delete()


class Migration(migrations.Migration):
    dependencies = [("modes", "0001_initial")]

    operations = [migrations.RunPython(add_seed_modes, remove_seed_modes)]
