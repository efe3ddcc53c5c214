"""
The catalog's answers, each shape defined once (aptix_site.shapes) for its JSON and its OpenAPI schema: the
agent_list_modes payload (TUL-010 §3.3) and a mode's detail, built once per catalog snapshot; and the table
and Markdown views of list_modes.
"""

from dataclasses import replace

from django.template.defaultfilters import pluralize
from rest_framework import serializers

from aptix_site.shapes import Shape

from .models import AgentMode


def string_list(**kwargs):
    return serializers.ListField(child=serializers.CharField(), **kwargs)


SWITCH_TARGETS_HELP = "Keys of the modes the model may switch to from this one; empty: any."
LLM_CAN_ENTER_HELP = "Whether agent_change_mode may switch into this mode."


# A mode as listings show it: its AgentModeSummary (AGN-014 §4). (Shapes have no docstring: see aptix_site.shapes.)
class ModeSummaryResponse(Shape):
    id = serializers.CharField()
    key = serializers.CharField()
    display_name = serializers.CharField()
    description = serializers.CharField()
    system_prompt_summary = serializers.CharField()
    is_default = serializers.BooleanField()
    human_role_hints = string_list()
    example_utterances = string_list()
    source = serializers.ChoiceField(choices=AgentMode.Source.values)
    status = serializers.ChoiceField(choices=AgentMode.Status.values)
    switch_targets = string_list(help_text=SWITCH_TARGETS_HELP)
    llm_can_enter = serializers.BooleanField(help_text=LLM_CAN_ENTER_HELP)


class ModeListResponse(Shape):
    modes = ModeSummaryResponse(many=True)
    catalog_revision = serializers.IntegerField(help_text="The catalog revision this listing shows.")


def mode_list_payload(modes: list[AgentMode], *, include_examples: bool, catalog_revision: int | None) -> dict:
    """The agent_list_modes payload for these modes, in this order; their example utterances only if asked for."""
    summaries = [mode.create_summary() for mode in modes]
    if not include_examples:
        summaries = [replace(summary, example_utterances=()) for summary in summaries]
    return ModeListResponse({"modes": summaries, "catalog_revision": catalog_revision}).data


def render_table(modes: list[AgentMode]) -> str:
    header = ("KEY", "NAME", "STATUS", "SOURCE", "DEFAULT", "WHEN TO USE")
    rows = [
        (mode.key, mode.display_name, mode.status, mode.source, "yes" if mode.is_default else "", mode.when_to_use)
        for mode in modes
    ]
    widths = [max(map(len, column)) for column in zip(header, *rows)]
    # The last column is padded too, harmlessly: the line's end is stripped.
    return "\n".join("  ".join(map(str.ljust, row, widths)).rstrip() for row in [header, *rows])


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
    total, builtin = len(catalog), sum(1 for mode in catalog if mode.source == AgentMode.Source.BUILTIN)
    lines += ["", f"Total: {total} mode{pluralize(total)} ({builtin} built-in, {total - builtin} custom)"]
    if filter_text.strip():
        lines.append(f'Showing {len(modes)} mode{pluralize(modes)} matching filter "{filter_text.strip()}"')
    return "\n".join(lines)


class IsoDateTimeField(serializers.DateTimeField):
    """A time as isoformat() writes it (+00:00), as a mode's detail has always given it (DRF would write Z)."""

    def to_representation(self, value):
        return value.isoformat()


# Every field of a mode, for GET /api/modes/<key>/ and the MCP resource of a mode.
class ModeDetailResponse(Shape):
    id = serializers.CharField()
    key = serializers.CharField()
    display_name = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    when_to_use = serializers.CharField()
    is_default = serializers.BooleanField()
    status = serializers.ChoiceField(choices=AgentMode.Status.values)
    version = serializers.CharField()
    source = serializers.ChoiceField(choices=AgentMode.Source.values)
    position = serializers.IntegerField()
    prompt = serializers.CharField(allow_blank=True, help_text=AgentMode.prompt.field.help_text)
    mode_instructions = string_list()
    custom_instructions = serializers.CharField(
        allow_blank=True, help_text=AgentMode.custom_instructions.field.help_text
    )
    behavior_hints = string_list()
    human_role_hints = string_list()
    example_utterances = string_list()
    associated_tool_ids = string_list()
    tool_group_hints = string_list()
    rag_scope_hints = string_list()
    strong_signals = string_list()
    weak_signals = string_list()
    switch_targets = string_list(help_text=SWITCH_TARGETS_HELP)
    llm_can_enter = serializers.BooleanField(help_text=LLM_CAN_ENTER_HELP)
    entry_confirmation = serializers.ChoiceField(
        choices=AgentMode.EntryConfirmation.values,
        help_text="Who confirms a switch into this mode: inherit (the MODE_CHANGE_CONFIRMATION setting), user or none.",
    )
    created_at = IsoDateTimeField()
    updated_at = IsoDateTimeField()


def mode_detail_payload(catalog, mode: AgentMode) -> dict:
    """Every field of a mode of this catalog snapshot, built once per snapshot."""
    return catalog.memoized(("mode-detail", mode.pk), lambda: ModeDetailResponse(mode).data)
