"""
Claude Code's subagents: Markdown files in `.claude/agents/` (and a user's `~/.claude/agents/`, the same format),
with YAML front matter (name, description, tools, disallowedTools, model, color, permissionMode, skills...) and the
system prompt as the body.

Tool permissions: a subagent without `tools` inherits every tool, `disallowedTools` taken away, and one whose `tools`
is empty (`[]`, `''`) has none; the catalog lists the groups a mode may use. A group is granted when any of its tools
is left to the subagent.
"""

import re

from ..models import AgentMode
from ..portable import PortableFileError
from .base import APPROXIMATED, CARRIED, DROPPED, TOOL_GROUPS, AgentFile, Reading, Writing, problem
from .markdown import (
    GroupExport, ModeExport, agent_name, check_fields, export_groups, export_text, finish, is_count,
    is_flag, is_text, read_body, read_description, read_markdown, read_name, refined_groups, refuse_duplicates,
    split_front_matter, start_agent, write_markdown,
)

CLAUDE_PATH = re.compile(r"\A\.claude/agents/(?:[^/]+/)*[^/]+\.md\Z")

# Claude Code's tools by group; the first ones of each are those written for it.
GROUP_TOOLS = {
    "read": ("Read", "Grep", "Glob", "LS", "NotebookRead"),
    "edit": ("Edit", "Write", "NotebookEdit", "MultiEdit"),
    "command": ("Bash", "BashOutput", "KillShell", "KillBash"),
    "browser": ("WebFetch", "WebSearch"),
    "modes": ("Task", "Agent"),
}
WRITTEN_TOOLS = {"read": ("Read", "Grep", "Glob"), "edit": ("Edit", "Write", "NotebookEdit"), "command": ("Bash",),
                 "browser": ("WebFetch", "WebSearch"), "modes": ("Task",)}
MCP_PREFIX = "mcp__"

DROPPED_FIELDS = {
    "model": "the model it runs on",
    "color": "its colour",
    "permissionMode": "how it asks for permissions",
    "maxTurns": "its most agentic turns",
    "skills": "the skills loaded into it",
    "mcpServers": "the MCP servers it has",
    "hooks": "its hooks",
    "memory": "its memory's scope",
    "background": "whether it runs in the background",
    "effort": "its effort",
    "isolation": "whether it runs in a worktree",
    "initialPrompt": "its first prompt",
    "disabled": "whether it is disabled",
}


def _is_tool_list(value) -> bool:
    return isinstance(value, str) or isinstance(value, list) and all(isinstance(tool, str) for tool in value)


CHECKS = {
    "description": (is_text, "text"),
    "tools": (_is_tool_list, "tool names, comma-separated or as a list"),
    "disallowedTools": (_is_tool_list, "tool names, comma-separated or as a list"),
    "model": (is_text, "text (sonnet, opus, haiku, inherit or a model's name)"),
    "color": (is_text, "text"),
    "permissionMode": (is_text, "text"),
    "maxTurns": (is_count, "a whole number above 0"),
    "skills": (_is_tool_list, "skill names, comma-separated or as a list"),
    "mcpServers": (lambda value: isinstance(value, list), "a list of servers"),
    "hooks": (lambda value: isinstance(value, dict), "a mapping of hook events"),
    "memory": (is_text, "text"),
    "background": (is_flag, "true or false"),
    "effort": (is_text, "text"),
    "isolation": (is_text, "text"),
    "initialPrompt": (is_text, "text"),
    "disabled": (is_flag, "true or false"),
}


# Claude Code's own rewriting of front matter that is not YAML (cli.js 2.1.112, parseFrontmatter's fallback): each
# 'key: value' line whose value holds one of these, and is not wholly quoted, is written in double quotes: text.
# JavaScript's '.' stops at \r, \u2028 and \u2029; the spaces are taken possessively, so that a long run of them before
# one of those fails once, not once for each split of the run.
_LINE = re.compile(r"([a-zA-Z_-]+):\s++([^\r\u2028\u2029]+)\Z")
_NOT_PLAIN = re.compile(r"[{}\[\]*&#!|>%@`]|: ")


def claude_code_line(line: str) -> tuple[str, list[str]] | None:
    """A line of front matter as Claude Code rewrites it when the YAML fails, or None when it leaves it."""
    match = _LINE.match(line)
    if not match:
        return None
    key, value = match.groups()
    if value[0] == value[-1] and value[0] in "'\"" or not _NOT_PLAIN.search(value):
        return None
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return key, [f'{key}: "{escaped}"']


def is_claude_code_file(path: str) -> bool:
    return bool(CLAUDE_PATH.match(path))


# Reading


def read_claude_code(files: list[AgentFile], *, format_name: str = "claude-code") -> Reading:
    reading = Reading()
    for file in files:
        _read_agent(reading, file, format_name)
    refuse_duplicates(reading, "Claude Code")
    return reading


def _read_agent(reading: Reading, file: AgentFile, format_name: str) -> None:
    try:
        agent = read_markdown(file.content, rewrite=claude_code_line)
    except PortableFileError as error:
        reading.problems += [problem(file.path, None, message) for message in error.problems]
        return
    if agent.fields is None:
        reading.problems.append(problem(file.path, None, "a subagent's file starts with front matter ('---' lines) "
                                                         "holding its name and description."))
        return
    if cut := _cut_short(file.content):
        reading.problems.append(problem(file.path, None, cut))
        return
    name = agent.fields.get("name")
    report, entry = start_agent(reading, file.path, name, format_name=format_name)
    # An empty tools: is no tool to Claude Code (an empty list; only a missing field inherits every tool).
    given = {key: [] if key in ("tools", "disallowedTools") and value is None else value
             for key, value in agent.fields.items() if key != "name"}
    fields = check_fields(report, given, CHECKS)
    if entry is not None:
        read_name(report, entry, name, agent.kept, field_name="name", source="the name")
        description = fields.get("description")
        if isinstance(description, str):  # each \n written in it is a line break to Claude Code (cli.js 2.1.112)
            description = description.replace("\\n", "\n")
        read_description(report, entry, description, agent, tool="Claude Code")
        read_body(report, entry, agent.body, field_name="body", kept=agent.kept)
    for key, value in fields.items():
        if key in ("tools", "disallowedTools"):
            report.line(key, *_tools_fate(key, tool_names(value)))
        elif key in DROPPED_FIELDS:
            report.dropped(key, value, f"{DROPPED_FIELDS[key]}: the catalog has no field for it")
        elif key != "description":
            report.dropped(key, value, "not a Claude Code subagent field")
    if entry is not None:
        groups = granted_groups(fields.get("tools"), fields.get("disallowedTools"))
        entry["tool_group_hints"] = refined_groups(groups, agent.kept)
    finish(reading, report, file.path, entry)


def _cut_short(content: str) -> str | None:
    """
    Why Claude Code reads the front matter cut short, or None: its frontmatter regex ends it at the first '---' after
    the opening line, wherever that is, and reads the rest as the prompt.
    """
    front, _ = split_front_matter(content)
    for number, line in enumerate((front or "").split("\n"), start=2):
        if "---" in line:
            return f"line {number} holds '---', where Claude Code ends the front matter (wherever it is in a line) " \
                   "and reads the rest as the prompt: write it without '---', or in double quotes with a dash " \
                   "escaped ('--\\u002d')."
    return None


def tool_names(value) -> list[str]:
    """The tools of a 'Read, Grep' string or a YAML list, each without its '(...)' rule."""
    items = value.split(",") if isinstance(value, str) else value or []
    return [item.strip() for item in items if item.strip()]


def _bare(tool: str) -> str:
    return tool.split("(", 1)[0].strip()


def _group_of(tool: str) -> str | None:
    name = _bare(tool)
    if name.startswith(MCP_PREFIX):
        return "mcp"
    return next((group for group, names in GROUP_TOOLS.items() if name in names), None)


def granted_groups(tools, disallowed) -> list[str]:
    """
    The groups of the tools the subagent has: those of the tools listed (all, if none is), less a group whose
    main tools (those written for it) are all disallowed.
    """
    denied = {_bare(tool) for tool in tool_names(disallowed)}
    if tools is None:
        granted = set(TOOL_GROUPS)
    else:
        granted = {_group_of(tool) for tool in tool_names(tools) if _bare(tool) not in denied} - {None}
    granted -= {group for group, main in WRITTEN_TOOLS.items() if set(main) <= denied}
    return [group for group in TOOL_GROUPS if group in granted]


def _tools_fate(field_name: str, tools: list[str]) -> tuple[str, str]:
    notes, approximated = [], False
    for tool in tools:
        group = _group_of(tool)
        if group is None:
            approximated = True
            notes.append(f"{tool}: no tool group holds it, dropped")
        elif tool != _bare(tool) or group == "mcp" and tool != f"{MCP_PREFIX}*":
            approximated = True
            notes.append(f"{tool}: the {group} group, {'its rule' if '(' in tool else 'for this tool only'} dropped")
        else:
            notes.append(f"{tool}: the {group} group" + (" taken away" if field_name == "disallowedTools" else ""))
    if not tools:
        notes.append("no tools" if field_name == "tools" else "none")
    if field_name == "disallowedTools" and _partial(tools):
        approximated = True
        notes.append("a group is taken away only with all its tools: one left keeps it")
    if all(_group_of(tool) is None for tool in tools) and tools:
        return DROPPED, "; ".join(notes)
    return (APPROXIMATED if approximated else CARRIED), "; ".join(notes)


def _partial(tools: list[str]) -> bool:
    """Whether some group has only part of its tools disallowed (so it stays, narrower)."""
    denied = {_bare(tool) for tool in tools}
    return any(denied & set(names) and not set(WRITTEN_TOOLS[group]) <= denied for group, names in GROUP_TOOLS.items())


# Writing


def write_claude_code(modes: list[AgentMode]) -> Writing:
    """Each mode as a subagent's file, `.claude/agents/<name>.md`."""
    writing = Writing()
    for mode in modes:
        name = agent_name(mode.key)
        path = f".claude/agents/{name}.md"
        export = ModeExport(path=path, mode=mode, tool="Claude Code")
        description, body = export_text(export)
        fields = {"name": name, "description": description, **export_groups(export, _write_tools)}
        writing.files.append(AgentFile(path, write_markdown(fields, body, export.kept)))
        writing.report += export.report()
    return writing


def _write_tools(groups: list[tuple[str, dict | None]]) -> GroupExport:
    """
    The tools that give the groups: none listed for every group (the subagent inherits all); an empty list for no
    group; else the groups' tools, or, with MCP's (named by their servers, so not listed), every tool inherited but
    the other groups'.
    """
    names = {group for group, _ in groups}
    limited = any(options for _, options in groups)
    how = "Claude Code's tools cannot limit edits to files matching a regular expression: the subagent may edit " \
          "any file" if limited else ""
    if not groups:
        # Only a missing tools field inherits every tool: Claude Code's agent loader reads [] (and '', and an empty
        # 'tools:') as an empty list, and runs the subagent with the tools listed: none.
        return GroupExport({"tools": []}, granted_groups([], None), note="the subagent has no tools")
    if names == set(TOOL_GROUPS):
        return GroupExport({}, list(TOOL_GROUPS), how)
    if "mcp" in names:
        denied = ", ".join(tool for group in GROUP_TOOLS if group not in names for tool in WRITTEN_TOOLS[group])
        return GroupExport({"disallowedTools": denied}, granted_groups(None, denied), how)
    tools = ", ".join(tool for group in TOOL_GROUPS if group in names for tool in WRITTEN_TOOLS[group])
    return GroupExport({"tools": tools}, granted_groups(tools, None), how)
