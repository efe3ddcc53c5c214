"""
The offline scorer: no network, no key. It ranks the modes for an utterance by how close the utterance is to each
mode's routing text (its when-to-use line, description and example utterances, less the utterance itself) in
WordLlama's embedding space, whose 16 MB model ships inside its PyPI wheel: nothing is downloaded. The closest mode
is proposed; the mode the session is in, or none as close as ROUTING_EVAL_THRESHOLD (cosine), is stay.
benchmarks/routing_scorers.py measured it against a lexical ranker (BM25): docs/catalog.md has the figures.
"""

import re
from functools import cache
from pathlib import Path

import numpy as np
from django.conf import settings

from aptix_site.service_errors import NotAllowed

from ..catalog import Catalog
from ..models import ROUTING_STAY
from ..permissions import may
from .cases import Case
from .evaluation import Outcome, evaluate_revision


@cache
def embedding_model():
    """WordLlama's default model, from the files its wheel installs (downloads disabled: the wheel has them all)."""
    import wordllama  # noqa: PLC0415  (0.4 s and 60 MB: loaded by the first evaluation, not by every process)

    # Its own lookup of bundled files looks in "tokenizer/" while the wheel installs "tokenizers/"; as a cache
    # directory, the package's own folder is found through the right names.
    return wordllama.WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)


def routing_texts(catalog: Catalog) -> tuple[list[str], list[int]]:
    """Each mode's routing text, one piece per line of it, in catalog order, and where each mode's pieces start."""
    pieces, starts = [], []
    for mode in catalog.modes:
        starts.append(len(pieces))
        pieces += [text for text in (mode.when_to_use, mode.description, *mode.example_utterances) if text.strip()]
    return pieces, starts


def same_text(text: str) -> str:
    """What a case's own text is recognized by among the pieces: its words, whatever their case and punctuation."""
    return " ".join(re.findall(r"\w+", text.casefold()))


BATCH = 256  # cases scored at once: 256 x 10,000 pieces of routing text is 10 MB of similarities (20 MB with a copy)


class OfflineScorer:
    name = "offline"

    def __init__(self, threshold: float | None = None):
        self.threshold = settings.ROUTING_EVAL_THRESHOLD if threshold is None else threshold

    def outcomes(self, catalog: Catalog, cases: list[Case]):
        if not cases:
            return
        model = embedding_model()
        pieces, starts = routing_texts(catalog)  # every mode has a piece: its when-to-use line is never blank
        keys = [mode.key for mode in catalog.modes]
        where = {}  # each piece's words: its positions, to leave a case's own text out
        for position, piece in enumerate(pieces):
            where.setdefault(same_text(piece), []).append(position)
        # Each distinct text is one column: the same words, in two modes, score the same to the bit, so a tie goes to
        # the mode first in the catalog on any machine (a matrix product's rounding differs from column to column).
        columns = {}
        column_of_piece = np.array([columns.setdefault(piece, len(columns)) for piece in pieces], dtype=np.intp)
        embedded = model.embed(list(columns), norm=True)
        for start in range(0, len(cases), BATCH):  # a batch's matrix, not every case's: bounded memory
            batch = cases[start:start + BATCH]
            similarity = (model.embed([case.utterance for case in batch], norm=True) @ embedded.T)[:, column_of_piece]
            for row, case in enumerate(batch):
                similarity[row, where.get(same_text(case.utterance), [])] = -1.0
            closest = np.maximum.reduceat(similarity, starts, axis=1)  # per mode, its closest piece
            for scores, case in zip(closest, batch):
                top = int(scores.argmax())
                proposed = keys[top] if scores[top] >= self.threshold else ROUTING_STAY
                yield Outcome(ROUTING_STAY if proposed == case.current_mode else proposed)


class EvaluationForbidden(NotAllowed):
    message = "You need the permission modes.add_routingevaluation to evaluate catalog revisions."


def run_offline_evaluation(*, number: int, user):
    """What the API and the releases page run (seconds): revision number scored offline, stored, by user."""
    if not may(user, "add_routingevaluation"):
        raise EvaluationForbidden()
    return evaluate_revision(number=number, scorer=OfflineScorer(), by=user)
