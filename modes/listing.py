"""
One listing of the modes for every entry point: the agent_list_modes payload
(TUL-010 §3.3, camelCase) and the table and Markdown views of list_modes.
"""

from .models import AgentMode


def mode_payload(mode: AgentMode, *, include_examples: bool) -> dict:
    summary = mode.create_summary()
    return {
        "id": summary.id,
        "key": summary.key,
        "displayName": summary.display_name,
        "description": summary.description,
        "systemPromptSummary": summary.system_prompt_summary,
        "isDefault": summary.is_default,
        "humanRoleHints": list(summary.human_role_hints),
        "exampleUtterances": list(summary.example_utterances) if include_examples else [],
        "source": summary.source,
        "status": summary.status,
        "switchTargets": list(summary.switch_targets),
        "llmCanEnter": summary.llm_can_enter,
    }


def mode_list_payload(modes: list[AgentMode], *, include_examples: bool, catalog_revision: int | None) -> dict:
    return {
        "modes": [mode_payload(mode, include_examples=include_examples) for mode in modes],
        "catalogRevision": catalog_revision,
    }


def render_table(modes: list[AgentMode]) -> str:
    header = ("KEY", "NAME", "STATUS", "SOURCE", "DEFAULT", "WHEN TO USE")
    rows = [
        (mode.key, mode.display_name, mode.status, mode.source, "yes" if mode.is_default else "", mode.when_to_use)
        for mode in modes
    ]
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header) - 1)]
    return "\n".join(
        "  ".join([*(cell.ljust(width) for cell, width in zip(row, widths)), row[-1]]).rstrip()
        for row in [header, *rows]
    )


def render_markdown(modes: list[AgentMode], *, catalog: list[AgentMode], filter_text: str = "") -> str:
    """The listing of list-modes-tool-architecture.md: built-in modes, custom modes, totals."""
    lines = ["# Available Modes"]
    for source, heading in ((AgentMode.Source.BUILTIN, "Built-in Modes"), (AgentMode.Source.CUSTOM, "Custom Modes")):
        section = [mode for mode in modes if mode.source == source]
        lines += ["", f"## {heading}"]
        if not section:
            lines += ["", "_None._"]
        for mode in section:
            status = f"{mode.status} (default)" if mode.is_default else mode.status
            lines += [
                "",
                f"### {mode.display_name} ({mode.key})",
                f"- **When to Use**: {mode.when_to_use}",
                f"- **Tools**: {', '.join(mode.associated_tool_ids) or 'none'}",
                f"- **Status**: {status}",
            ]
    builtin = sum(1 for mode in catalog if mode.source == AgentMode.Source.BUILTIN)
    lines += ["", f"Total: {_modes(len(catalog))} ({builtin} built-in, {len(catalog) - builtin} custom)"]
    if filter_text.strip():
        lines.append(f'Showing {_modes(len(modes))} matching filter "{filter_text.strip()}"')
    return "\n".join(lines)


def _modes(count: int) -> str:
    return f"{count} mode" if count == 1 else f"{count} modes"


def mode_detail_payload(mode: AgentMode) -> dict:
    """Every field of a mode, camelCase, for GET /api/modes/<key>/."""
    return {
        "id": mode.id,
        "key": mode.key,
        "displayName": mode.display_name,
        "description": mode.description,
        "whenToUse": mode.when_to_use,
        "isDefault": mode.is_default,
        "status": mode.status,
        "version": mode.version,
        "source": mode.source,
        "position": mode.position,
        "modeInstructions": mode.mode_instructions,
        "behaviorHints": mode.behavior_hints,
        "humanRoleHints": mode.human_role_hints,
        "exampleUtterances": mode.example_utterances,
        "associatedToolIds": mode.associated_tool_ids,
        "toolGroupHints": mode.tool_group_hints,
        "ragScopeHints": mode.rag_scope_hints,
        "strongSignals": mode.strong_signals,
        "weakSignals": mode.weak_signals,
        "switchTargets": mode.switch_targets,
        "llmCanEnter": mode.llm_can_enter,
        "createdAt": mode.created_at.isoformat(),
        "updatedAt": mode.updated_at.isoformat(),
    }
