"""
The mode catalog service of AGN-014 §5: every read of the modes goes through here.

Lookups are by key (prompts and tools speak in keys); sessions store ids.
"""

from django.core.exceptions import ImproperlyConfigured

from .models import AgentMode, AgentModeSummary
from .validators import is_mode_key

# AGN-014 §6.2, word for word (note the typographic apostrophes).
MODE_SWITCHING_LINES = (
    "- If the user’s request clearly matches another mode’s \"when to use\" description, "
    "you may recommend switching.",
    "- If the user expresses interest in switching, follow the instructions in the "
    "agent_change_mode tool.",
    "- If you need more detail about modes, call the agent_list_modes tool.",
)


class UnknownModeError(LookupError):
    """A mode key that is not in the catalog; the message lists the keys that are."""

    def __init__(self, key, valid_keys):
        self.key = key
        self.valid_keys = list(valid_keys)
        super().__init__(f"Unknown mode key {key!r}. Valid keys: {', '.join(self.valid_keys)}.")


def _all_modes() -> list[AgentMode]:
    return list(AgentMode.objects.all())


def get_all_modes() -> list[AgentModeSummary]:
    """Every mode in catalog order, as summaries."""
    return [mode.create_summary() for mode in _all_modes()]


def find_modes(*, text: str = "") -> list[AgentMode]:
    """Modes whose key, display name, description or when-to-use contains text, ignoring case."""
    modes = _all_modes()
    needle = text.strip().casefold()
    if not needle:
        return modes
    return [
        mode
        for mode in modes
        if any(
            needle in value.casefold()
            for value in (mode.key, mode.display_name, mode.description, mode.when_to_use)
        )
    ]


def get_mode(mode_key: str) -> AgentMode:
    """The mode with this key; UnknownModeError names the key and the valid ones otherwise."""
    # Text that cannot be a key (NUL bytes, say) never reaches the database.
    mode = AgentMode.objects.filter(key=mode_key).first() if is_mode_key(mode_key) else None
    if mode is None:
        raise UnknownModeError(mode_key, AgentMode.objects.values_list("key", flat=True))
    return mode


def get_tools_for_mode(mode_key: str) -> list[str]:
    """The tool names the mode enables, as a new list the caller may change."""
    return list(get_mode(mode_key).associated_tool_ids)


def get_default_mode(modes=None) -> AgentMode:
    for mode in _all_modes() if modes is None else modes:
        if mode.is_default:
            return mode
    raise ImproperlyConfigured("The mode catalog has no default mode (modes.E005).")


def build_system_prompt(current_mode_key: str | None) -> str:
    """The Mode Catalog block of AGN-014 §6.2; an empty or unknown key means the default mode."""
    modes = _all_modes()
    keys = {mode.key for mode in modes}
    current = current_mode_key if current_mode_key in keys else get_default_mode(modes).key
    return "\n".join(
        [
            f"Current Mode: {current}",
            "",
            "Available Modes:",
            *(f"- {mode.key}: {mode.when_to_use}" for mode in modes),
            "",
            "Mode Switching:",
            *MODE_SWITCHING_LINES,
        ]
    )
