"""
The coding agents' formats by name (as --from and --to spell them), each knowing the paths of its files, reading them
into the catalog's portable mode entries and writing catalog modes (docs/coding-agents.md).
"""

from dataclasses import replace

from ..models import AgentMode
from .base import APPROXIMATED, CARRIED, AgentFile, AgentFormat, Fidelity, Reading, Writing
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


def _checked(read, write):
    """
    write, its report checked against what read gives back: a field reported carried that an import of the written
    files would not give back unchanged (a carriage return, a line an import takes for a marker) is approximated.
    """
    def checked_write(modes: list[AgentMode]) -> Writing:
        writing = write(modes)
        read_back = {entry["key"]: entry for _, entry in read(writing.files).modes}
        modes_by_key = {mode.key: mode for mode in modes}
        writing.report = [
            _as_read_back(line, modes_by_key[line.mode], read_back.get(line.mode)) for line in writing.report
        ]
        return writing

    return checked_write


def _as_read_back(line: Fidelity, mode: AgentMode, entry: dict | None) -> Fidelity:
    if line.fate != CARRIED:
        return line
    written = getattr(mode, line.field)
    back = (entry or {}).get(line.field, AgentMode._meta.get_field(line.field).get_default())
    if back == written:
        return line
    if isinstance(written, str) and isinstance(back, str):
        at = next((index for index, (a, b) in enumerate(zip(written, back)) if a != b), min(len(written), len(back)))
        how = f"an import of the file gives it back changed, from its character {at + 1} on"
    else:
        how = "an import of the file gives it back changed"
    return replace(line, fate=APPROXIMATED, how="; ".join(filter(None, [line.how, how])))


def _format(name: str, recognizes, read, write) -> AgentFormat:
    return AgentFormat(name, recognizes, read, _checked(read, write))


FORMATS = {
    format.name: format
    for format in (
        _format("roo", is_roo_file, lambda files: read_roo(files, format_name="roo"),
                lambda modes: write_roo(modes, format_name="roo")),
        _format("kilo", lambda path: is_kilo_modes_file(path) or is_kilo_agent_file(path), _read_kilo,
                lambda modes: write_opencode(modes, format_name="kilo")),
        _format("opencode", is_opencode_file, lambda files: read_opencode(files, format_name="opencode"),
                lambda modes: write_opencode(modes, format_name="opencode")),
        _format("claude-code", is_claude_code_file, read_claude_code, write_claude_code),
    )
}


def format_of(path: str) -> AgentFormat | None:
    """The format whose file path is, by its name and folder; None for a file no coding agent reads modes from."""
    return next((format for format in FORMATS.values() if format.recognizes(path)), None)


def recognizer(from_format: str | None):
    """Whether a path is a mode file to read: one of from_format's files, or, without it, of any format's."""
    return FORMATS[from_format].recognizes if from_format else lambda path: format_of(path) is not None
