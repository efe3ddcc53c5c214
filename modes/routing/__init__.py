"""
Routing evaluations (issue 42): how well the model would route utterances to modes with a revision's catalog.

Cases (cases.py, moved as files by files.py) are scored by a scorer (the offline one here, offline.py; the LLM one
in agent_api.routing_llm), measured and stored with the revision (evaluation.py), and judged by the release gate
(gate.py) before a revision is approved or published.
"""
