"""
OpenCode's agents, and Kilo's, which are the same: Markdown files in `.opencode/agent/` (Kilo: `.kilo/agent/`,
`.kilocode/agent/`; `agents/` too, and the older `mode/`), named by their file, with YAML front matter (description,
mode, model, tools, permission...) and the prompt as the body; and the "agent" object of `opencode.json(c)`
(Kilo: `kilo.json(c)`), whose JSONC may hold comments and trailing commas.

Tool permissions: OpenCode allows every tool an agent's `permission` (or the older `tools` map) does not deny, the
last matching key winning; the catalog lists the groups a mode may use. A group is granted when any of its tools is
not denied; "ask" and pattern maps are approximated as granted, and said so.
"""

import posixpath
import fnmatch
import re

from ..models import AgentMode
from ..portable import PortableFileError, load_text
from .base import APPROXIMATED, CARRIED, TOOL_GROUPS, AgentFile, Reading, Writing, YAML12Loader, problem
from .markdown import (
    AgentReport, GroupExport, ModeExport, agent_name, body_text, check_fields, export_groups, export_text, finish,
    is_count, is_flag, is_number, is_text, read_body, read_description, read_markdown, read_name, refined_groups,
    refuse_duplicates, shown, start_agent, write_markdown,
)

TOOL_NAMES = {"opencode": "OpenCode", "kilo": "Kilo"}
AGENT_FOLDERS = {"opencode": ".opencode", "kilo": ".kilo"}
_AGENT_FILE = r"(?:agents?/(?:[^/]+/)*[^/]+|modes?/[^/]+)\.md"
OPENCODE_PATH = re.compile(rf"\A(?:\.opencode/{_AGENT_FILE}|(?:\.opencode/)?opencode\.jsonc?)\Z")
KILO_PATH = re.compile(rf"\A(?:\.kilo(?:code)?/{_AGENT_FILE}|(?:\.kilo(?:code)?/)?kilo\.jsonc?)\Z")
# The agents each tool has of its own: a config entry of that name without a description configures it.
BUILT_IN_AGENTS = {
    "opencode": {"build", "plan", "general", "explore", "compaction", "title", "summary"},
    "kilo": {"build", "plan", "general", "explore", "compaction", "title", "summary", "code", "ask", "architect",
             "debug", "orchestrator"},
}

# The tools of each group, as OpenCode's permission keys name them (edit covers write, patch and multiedit).
GROUP_TOOLS = {
    "read": ("read", "grep", "glob", "list"),
    "edit": ("edit",),
    "command": ("bash",),
    "browser": ("webfetch", "websearch"),
    "modes": ("task",),
}
EDIT_TOOLS = ("edit", "write", "patch", "multiedit", "apply_patch")
# Tools with no group: Roo Code gives a mode its questions and to-do list whatever its groups.
NO_GROUP_TOOLS = ("todowrite", "todoread", "question", "skill", "lsp", "codesearch", "external_directory", "doom_loop")
ALWAYS_ALLOWED = ("question", "todowrite", "todoread")
MCP_TOOL = "mcp\x00"  # a name no built-in tool has: only wildcard keys ('*') decide an MCP server's tools
ACTIONS = ("allow", "ask", "deny")

DROPPED_FIELDS = {
    "mode": "whether it is a primary agent, a subagent or both",
    "model": "the model it runs on",
    "variant": "the model's variant",
    "temperature": "the model's temperature",
    "top_p": "the model's top_p",
    "hidden": "whether @ completion hides it",
    "hidden_from_cycle": "whether Tab skips it",
    "color": "its colour",
    "steps": "its most agentic steps",
    "maxSteps": "its most agentic steps",
    "disable": "whether it is disabled",
    "options": "its model options",
}
CHECKS = {
    "description": (is_text, "text"),
    "mode": (lambda value: value in ("primary", "subagent", "all"), "primary, subagent or all"),
    "model": (is_text, "text (provider/model)"),
    "variant": (is_text, "text"),
    "temperature": (is_number, "a number"),
    "top_p": (is_number, "a number"),
    "hidden": (is_flag, "true or false"),
    "hidden_from_cycle": (is_flag, "true or false"),
    "disable": (is_flag, "true or false"),
    "color": (is_text, "text (#RRGGBB or a theme colour)"),
    "steps": (is_count, "a whole number above 0"),
    "maxSteps": (is_count, "a whole number above 0"),
    "options": (lambda value: isinstance(value, dict), "a mapping"),
    "tools": (lambda value: _names_tools(value) and all(isinstance(on, bool) for on in value.values()),
              "a mapping of tool names to true or false"),
    "permission": (lambda value: value in ACTIONS or _names_tools(value) and all(map(_is_rule, value.values())),
                   "allow, ask or deny, or a mapping of tool names to those (or to patterns mapped to those)"),
}


def _names_tools(value) -> bool:
    # Keys are matched against tool names as text: YAML reads '1:', 'true:' and '~:' as a number, a boolean and null.
    return isinstance(value, dict) and all(isinstance(key, str) for key in value)


def _is_rule(value) -> bool:
    return value in ACTIONS or isinstance(value, dict) and all(action in ACTIONS for action in value.values())


# OpenCode's own rewriting of front matter that is not YAML (packages/core/src/config/markdown.ts, sanitize; Kilo's
# fork the same): each unindented 'key: value' line whose value holds ':' becomes a literal block, its text.
_LINE = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*:\s*(.*)\Z")


def opencode_line(line: str) -> tuple[str, list[str]] | None:
    """A line of front matter as OpenCode rewrites it when the YAML fails, or None when it leaves it."""
    match = None if line.strip().startswith("#") or line[:1].isspace() else _LINE.match(line)
    value = match.group(2).strip() if match else ""
    if not match or value in ("", ">", "|") or value[0] in "'\"" or ":" not in value:
        return None
    return match.group(1), [f"{match.group(1)}: |-", f"  {value}"]


def is_opencode_file(path: str) -> bool:
    return bool(OPENCODE_PATH.match(path))


def is_kilo_agent_file(path: str) -> bool:
    return bool(KILO_PATH.match(path))


def is_config(path: str) -> bool:
    return path.endswith((".json", ".jsonc"))


# Reading


def read_opencode(files: list[AgentFile], *, format_name: str) -> Reading:
    """The agents of the files: each config's "agent" entries, then each other file as one agent's Markdown."""
    reading, by_path, prompt_files = Reading(), {file.path: file for file in files}, set()
    for file in files:
        if is_config(file.path):
            _read_config(reading, file, by_path, prompt_files, format_name)
    for file in files:
        if not is_config(file.path) and file.path not in prompt_files:
            _read_agent_file(reading, file, format_name)
    refuse_duplicates(reading, TOOL_NAMES.get(format_name, format_name))
    return reading


def _read_agent_file(reading: Reading, file: AgentFile, format_name: str) -> None:
    try:
        agent = read_markdown(file.content, rewrite=opencode_line)
    except PortableFileError as error:
        reading.problems += [problem(file.path, None, message) for message in error.problems]
        return
    fields = agent.fields or {}
    name = fields.get("name", _file_name(file.path))
    report, entry = start_agent(reading, file.path, name, format_name=format_name)
    if agent.fields is None:
        report.problem("the file has no front matter ('---' lines) with the agent's description.")
        finish(reading, report, file.path, entry)
        return
    fields = check_fields(report, fields, CHECKS)
    source = "the front matter's name" if "name" in fields else "the file's name"
    if entry is not None:
        read_name(report, entry, name, agent.kept, field_name="name", source=source)
        read_description(report, entry, fields.get("description"), agent, tool="OpenCode")
        read_body(report, entry, agent.body, field_name="body", kept=agent.kept)
    skip = {"name", "description"}
    if "prompt" in fields:
        report.dropped("prompt", fields["prompt"], "OpenCode takes the body as the prompt of a Markdown agent")
        skip.add("prompt")
    _read_settings(report, entry, {key: value for key, value in fields.items() if key not in skip}, agent.kept)
    finish(reading, report, file.path, entry)


def _file_name(path: str) -> str:
    """The agent's name: its path below agent/ (OpenCode names nested files 'folder/name'), or its file's name."""
    match = re.search(r"(?:\A|/)(?:agents?|modes?)/(.+)\.md\Z", path)
    return match.group(1) if match else posixpath.splitext(posixpath.basename(path))[0]


def _read_config(reading: Reading, file: AgentFile, by_path: dict, prompt_files: set, format_name: str) -> None:
    try:
        # A config that is not JSON is read as YAML, and then as the agents' YAML 1.2 as front matter is: YAML 1.1
        # read 'write: no' as false, silently taking the edit group away.
        config = load_text(strip_jsonc(file.content), yaml_loader=YAML12Loader)
    except PortableFileError as error:
        reading.problems += [problem(file.path, None, message) for message in error.problems]
        return
    if not isinstance(config, dict):
        reading.problems.append(problem(file.path, None, "a config must be a JSON object."))
        return
    for section in ("agent", "mode"):  # "mode": the older name of agents that are primary ones
        agents = config.get(section, {})
        if not isinstance(agents, dict) or not all(isinstance(agent, dict) for agent in agents.values()):
            reading.problems.append(problem(file.path, None, f'"{section}" must map agent names to objects.'))
            continue
        for name, agent in agents.items():
            _read_config_agent(reading, file, name, agent, by_path, prompt_files, format_name)


def _read_config_agent(reading, file, name, agent: dict, by_path, prompt_files, format_name) -> None:
    if name in BUILT_IN_AGENTS.get(format_name, ()) and "description" not in agent and "prompt" not in agent:
        report = AgentReport(reading, file.path, name)
        report.dropped(name, agent, f"configures {TOOL_NAMES.get(format_name, format_name)}'s own {name} agent, "
                                    "not a mode of its own")
        return
    report, entry = start_agent(reading, file.path, name, format_name=format_name)
    fields = check_fields(report, agent, {**CHECKS, "prompt": (is_text, "text or {file:./path}")})
    if entry is not None:
        read_name(report, entry, name, {}, field_name="name", source="the agent's name")
        read_description(report, entry, fields.get("description"))
        if "prompt" in fields:
            _read_config_prompt(report, entry, fields["prompt"], file.path, by_path, prompt_files)
    settings = {key: value for key, value in fields.items() if key not in ("name", "description", "prompt")}
    _read_settings(report, entry, settings, {})
    finish(reading, report, file.path, entry)


FILE_REFERENCE = re.compile(r"\{file:([^}]+)\}")


def _referenced_path(reference: str, config_path: str) -> str | None:
    """The path of the file a config's '{file:./path}' names, relative to the repository; None when it leaves it."""
    path = posixpath.normpath(posixpath.join(posixpath.dirname(config_path), reference.strip()))
    return None if reference.strip().startswith(("/", "~")) or path.startswith("../") or path == ".." else path


def prompt_files_named(file: AgentFile) -> set[str]:
    """The paths of the prompt files a config names ('{file:./prompts/review.md}'), which an import reads with it."""
    if not is_config(file.path):
        return set()
    paths = (_referenced_path(reference, file.path) for reference in FILE_REFERENCE.findall(file.content))
    return {path for path in paths if path}


def _read_config_prompt(report, entry, prompt: str, config_path: str, by_path: dict, prompt_files: set) -> None:
    """A prompt's text, or the file '{file:./path}' names when it was given with the config; else dropped."""
    match = re.fullmatch(r"\s*\{file:([^}]+)\}\s*", prompt)
    if not match:
        read_body(report, entry, prompt, field_name="prompt")
        return
    path = _referenced_path(match.group(1), config_path) or match.group(1).strip()
    if path not in by_path:
        report.dropped("prompt", prompt, f"names {path}, which was not given with the config: import it with the "
                                         "config, or put the prompt in an agent's Markdown file")
        return
    prompt_files.add(path)
    # OpenCode puts the file's text in place of the reference, as it is: a front matter in it is prompt too.
    read_body(report, entry, body_text(by_path[path].content.removeprefix("\ufeff").replace("\r\n", "\n")),
              field_name="prompt", how=f"read from {path}")


def _read_settings(report: AgentReport, entry: dict | None, fields: dict, kept: dict) -> None:
    """The fields other than name, description and prompt: tool permissions, or dropped with what they meant."""
    for name, value in fields.items():
        if name in ("tools", "permission"):
            report.line(name, *_permission_fate(name, value))
        elif name in DROPPED_FIELDS:
            report.dropped(name, value, f"{DROPPED_FIELDS[name]}: the catalog has no field for it")
        else:
            report.dropped(name, value, "not an OpenCode agent field (OpenCode passes such a field to the model as "
                                        "an option)")
    if entry is not None:
        entry["tool_group_hints"] = refined_groups(granted_groups(fields.get("tools"), fields.get("permission")), kept)


def permissions(tools: dict | None, permission) -> dict:
    """The permission rules as OpenCode applies them: the older tools map first, permission over it, in order."""
    rules = {}
    for tool, enabled in (tools or {}).items():
        rules["edit" if tool in EDIT_TOOLS else tool] = "allow" if enabled else "deny"
    rules.update({"*": permission} if isinstance(permission, str) else permission or {})
    return rules


def action(tool: str, rules: dict):
    """The rule for a tool: the last key matching it ('*' and '?' as wildcards), else allowed."""
    found = "allow"
    for pattern, rule in rules.items():
        # fnmatch's translation cannot backtrack catastrophically ('*' * 40 + 'z'); OpenCode's wildcards have no [.
        if fnmatch.fnmatchcase(tool, pattern.replace("[", "[[]")):
            found = rule
    return found


def granted_groups(tools: dict | None, permission) -> list[str]:
    """The tool groups an agent may use: those with a tool not denied (MCP tools: unless '*' denies them)."""
    rules = permissions(tools, permission)
    granted = {group for group, names in GROUP_TOOLS.items() if any(_allows(action(name, rules)) for name in names)}
    if _allows(action(MCP_TOOL, rules)):
        granted.add("mcp")
    return [group for group in TOOL_GROUPS if group in granted]


def _allows(rule) -> bool:
    return any(value != "deny" for value in rule.values()) if isinstance(rule, dict) else rule != "deny"


def _permission_fate(field_name: str, value) -> tuple[str, str]:
    """The fate of a tools or permission field, and how each of its keys was read."""
    written = {"*": value} if isinstance(value, str) else value
    notes, approximated = [], False
    for key, as_written in written.items():
        rule = ("allow" if as_written else "deny") if field_name == "tools" else as_written
        group, said = _group_of(key), f"{key}: {as_written if isinstance(as_written, str) else shown(as_written)}"
        if key == "*":
            approximated = approximated or rule not in ("allow", "deny")
            notes.append(f"{said}, for every tool not named after it")
        elif group is None:
            approximated = True
            notes.append(f"{said}: {_no_group(key)}, dropped")
        elif rule not in ("allow", "deny"):
            approximated = True
            patterns = "its patterns dropped, " if isinstance(rule, dict) else ""
            notes.append(f"{said}: {patterns}the {group} group {'granted' if _allows(rule) else 'not granted'} "
                         "(the catalog's groups neither ask nor match commands)")
        else:
            notes.append(f"{said}: the {group} group {'granted' if rule == 'allow' else 'not granted'}")
    return (APPROXIMATED if approximated else CARRIED), "; ".join(notes)


def _group_of(key: str) -> str | None:
    if key in EDIT_TOOLS:
        return "edit"
    return next((group for group, names in GROUP_TOOLS.items() if key in names), None)


def _no_group(key: str) -> str:
    if key in NO_GROUP_TOOLS:
        return "no tool group holds it"
    return "not a tool of OpenCode's own (an MCP server's tools are named by the server, which the catalog's mcp " \
           "group does not tell)"


def strip_jsonc(text: str) -> str:
    """
    JSON from JSONC: comments become spaces (their newlines kept, so that errors keep their line numbers) and a
    comma before '}' or ']' goes; strings are left as they are, '//' and '/*' in them too.
    """
    def uncomment(match):
        token = match.group(0)
        if token.startswith("/*") and not token.endswith("*/") or token == "/*/":
            raise PortableFileError(["A /* comment is never closed."])
        return token if token.startswith('"') else re.sub(r"[^\n]", " ", token)

    text = re.sub(r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*|/\*.*?(?:\*/|\Z)', uncomment, text, flags=re.S)
    return re.sub(r'"(?:[^"\\\n]|\\.)*"?|,(?=\s*[}\]])', lambda match: match.group(0).lstrip(","), text)


# Writing


def write_opencode(modes: list[AgentMode], *, format_name: str) -> Writing:
    """Each mode as an agent's Markdown file, `.opencode/agent/<name>.md` (Kilo: `.kilo/agent/<name>.md`)."""
    writing, tool = Writing(), TOOL_NAMES.get(format_name, format_name)
    for mode in modes:
        path = f"{AGENT_FOLDERS.get(format_name, '.opencode')}/agent/{agent_name(mode.key)}.md"
        export = ModeExport(path=path, mode=mode, tool=tool)
        description, body = export_text(export)
        fields = {"description": description, **export_groups(export, _write_permission)}
        writing.files.append(AgentFile(path, write_markdown(fields, body, export.kept)))
        writing.report += export.report()
    return writing


def _write_permission(groups: list[tuple[str, dict | None]]) -> GroupExport:
    """
    The permission that gives the groups: none for every group; else the tools of the groups left out denied, or,
    when MCP's tools are left out (OpenCode names them by their servers), every tool denied but the groups' own (no
    group: every tool denied but those of no group Roo Code gives every mode).
    """
    names = {group for group, _ in groups}
    if names == set(TOOL_GROUPS) and not any(options for _, options in groups):
        return GroupExport({}, list(TOOL_GROUPS))
    limited = {group for group, options in groups if options}
    how = "OpenCode's edit permission takes glob patterns, not a regular expression: the agent asks before each " \
          "edit" if "edit" in limited else ""
    if "mcp" in names:
        rules = {tool: "deny" for group in GROUP_TOOLS if group not in names for tool in GROUP_TOOLS[group]}
    else:
        # OpenCode keeps the keys' order and takes the last rule matching a tool: '*' matches every name, an MCP
        # server's tools too, and a tool it denies is left out of what the model is offered.
        rules = {"*": "deny", **{tool: "allow" for group in GROUP_TOOLS if group in names
                                 for tool in GROUP_TOOLS[group]}}
        rules.update({tool: "allow" for tool in ALWAYS_ALLOWED})
    rules.update({"edit": "ask"} if "edit" in limited else {})
    note = "" if groups else f"the agent has only {', '.join(ALWAYS_ALLOWED[:-1])} and {ALWAYS_ALLOWED[-1]}, " \
                             "which no group holds: Roo Code too gives every mode its questions and to-do list"
    return GroupExport({"permission": rules}, granted_groups(None, rules), how, note)

