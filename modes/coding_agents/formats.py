"""
The coding agents' formats by name (as --from and --to spell them), each knowing the paths of its files, reading them
into the catalog's portable mode entries and writing catalog modes (docs/coding-agents.md).
"""

from .base import AgentFile, AgentFormat, Reading
from .claude_code import is_claude_code_file, read_claude_code, write_claude_code
from .opencode import is_kilo_agent_file, is_opencode_file, read_opencode, write_opencode
from .roo import is_kilo_modes_file, is_roo_file, read_roo, write_roo


def _read_kilo(files: list[AgentFile]) -> Reading:
    """Kilo keeps modes both ways: Roo Code's .kilocodemodes, and OpenCode's agent files since it moved onto OpenCode."""
    modes = [file for file in files if is_kilo_modes_file(file.path)]
    agents = [file for file in files if not is_kilo_modes_file(file.path)]
    readings = [read_roo(modes, format_name="kilo"), read_opencode(agents, format_name="kilo")]
    return Reading(
        modes=[mode for reading in readings for mode in reading.modes],
        report=[line for reading in readings for line in reading.report],
        problems=[problem for reading in readings for problem in reading.problems],
    )


FORMATS = {
    format.name: format
    for format in (
        AgentFormat("roo", is_roo_file, lambda files: read_roo(files, format_name="roo"),
                    lambda modes: write_roo(modes, format_name="roo")),
        AgentFormat("kilo", lambda path: is_kilo_modes_file(path) or is_kilo_agent_file(path), _read_kilo,
                    lambda modes: write_opencode(modes, format_name="kilo")),
        AgentFormat("opencode", is_opencode_file, lambda files: read_opencode(files, format_name="opencode"),
                    lambda modes: write_opencode(modes, format_name="opencode")),
        AgentFormat("claude-code", is_claude_code_file, read_claude_code, write_claude_code),
    )
}


def format_of(path: str) -> AgentFormat | None:
    """The format whose file path is, by its name and folder; None for a file no coding agent reads modes from."""
    return next((format for format in FORMATS.values() if format.recognizes(path)), None)
