"""
The mode graph (issue 29): which mode the model may switch a session to, from which. Each mode's policy is two
fields: switch_targets (the keys it may switch to; empty: any) and llm_can_enter (false: no switch may enter it).
Staying in the mode a session is in is always allowed: llm_can_enter is about entering from another mode.
"""

from .models import AgentMode


class ModeSwitchRefused(Exception):
    """A switch the mode graph forbids; the message names both modes and the ones the current mode may switch to."""

    def __init__(self, *, current: str, target: str, allowed: list[str]):
        listed = ", ".join(allowed) or "none"
        super().__init__(f"Mode {current!r} cannot switch to {target!r}. Modes it can switch to: {listed}.")


def may_switch(source: AgentMode, target: AgentMode) -> bool:
    if source.pk == target.pk:
        return True
    return target.llm_can_enter and (not source.switch_targets or target.key in source.switch_targets)


def stuck_modes(modes, default: AgentMode) -> list[AgentMode]:
    """
    The modes, in order, from which the model cannot reach the default through switches it may make (TUL-007 exists
    so that the agent is never stuck); every other mode if the default cannot be entered.
    """
    # Backwards from the default: who may switch to a mode that reaches it (may_switch's rule, read per target). A
    # mode with no switch targets may switch to any mode that can be entered: it is reached with the first of them.
    naming = {}
    for mode in modes:
        for key in mode.switch_targets:
            naming.setdefault(key, []).append(mode)
    free = [mode for mode in modes if not mode.switch_targets]
    reached, frontier = {default.pk}, [default]
    while frontier:
        target = frontier.pop()
        if not target.llm_can_enter:
            continue
        sources, free = [*naming.get(target.key, ()), *free], []
        for mode in sources:
            if mode.pk not in reached:
                reached.add(mode.pk)
                frontier.append(mode)
    return [mode for mode in modes if mode.pk not in reached]


def catalog_graph_problems(modes) -> list[str]:
    """
    Every way modes break the graph's invariants, one sentence each (what the check and the admin say); none while
    there is not exactly one default, which modes.E005 and E006 say.
    """
    defaults = [mode for mode in modes if mode.is_default]
    if len(defaults) != 1:
        return []
    default, keys = defaults[0], {mode.key for mode in modes}
    problems = [
        f"Mode {mode.key!r} lists switch targets that name no mode: {', '.join(map(repr, unknown))}."
        for mode in modes
        if (unknown := [key for key in mode.switch_targets if key not in keys])
    ]
    if not default.llm_can_enter:
        problems.append(f"The default mode {default.key!r} cannot be entered by the model (llm_can_enter is off).")
    stuck = stuck_modes(modes, default)
    if stuck:
        problems.append(
            f"From {', '.join(repr(mode.key) for mode in stuck)} the model cannot reach the default mode "
            f"{default.key!r} through switches it may make."
        )
    return problems


GRAPH_HINT = (
    "Let the model enter the default mode (llm_can_enter), and give each stuck mode a switch target on a path to "
    "it (or leave its switch targets empty: any mode); remove target keys that name no mode."
)
