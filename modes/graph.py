"""
The mode graph (issue 29): which mode the model may switch a session to, from which. Each mode's policy is two
fields: switch_targets (the keys it may switch to; empty: any) and llm_can_enter (false: no switch may enter it).
Staying in the mode a session is in is always allowed: llm_can_enter is about entering from another mode.
"""

from .models import AgentMode


class ModeSwitchRefused(Exception):
    """A switch the mode graph forbids; the message names both modes and the ones the current mode may switch to."""

    def __init__(self, *, current: str, target: str, allowed: list[str]):
        self.current, self.target, self.allowed = current, target, list(allowed)
        super().__init__(
            f"Mode {current!r} cannot switch to {target!r}. "
            f"Modes it can switch to: {', '.join(self.allowed) or 'none'}."
        )


def may_switch(source: AgentMode, target: AgentMode) -> bool:
    """Whether the model may switch a session in source to target."""
    if source.pk == target.pk:
        return True
    return target.llm_can_enter and (not source.switch_targets or target.key in source.switch_targets)
