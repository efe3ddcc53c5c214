"""
The offline routing scorer (modes.routing.offline) measured: how many cases it routes right on the seed catalog and on
a catalog of 33 realistic modes, in two sets written by two authors (benchmarks/routing/), against a lexical ranker
(BM25, rank_bm25) given the same routing text, across thresholds; and how long it takes for 300 cases on this machine. It chose the scorer's ranker
and ROUTING_EVAL_THRESHOLD's default (docs/catalog.md, Routing evaluations). No database: the catalogs are read from
their files, as import_modes reads them.

    .venv/bin/python -m benchmarks.routing_scorers      (part of make bench; rank_bm25: benchmarks/requirements.txt)
"""

import json
import os
import re
import time
from pathlib import Path

HERE = Path(__file__).parent / "routing"
THRESHOLDS = (0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
BM25_THRESHOLDS = (0.0, 1.0, 2.0, 4.0, 6.0, 8.0, 12.0, 16.0)


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aptix_site.settings")
    os.environ.setdefault("SECRET_KEY", "benchmarks-only-not-a-secret")
    import django

    django.setup()
    from modes.routing.offline import OfflineScorer, embedding_model

    started = time.perf_counter()
    embedding_model()
    print(f"Embedding model loaded in {time.perf_counter() - started:.2f} s (once per process).")
    # Set A was written by the engineer who chose the threshold; set B by another author, independently, afterwards.
    sets = {
        "A, seed (3 modes)": ("catalog.json", "seed_cases.jsonl", True),
        "A, 33 modes": ("catalog.json", "cases.jsonl", False),
        "B, seed (3 modes)": ("catalog_b.json", "seed_cases_b.jsonl", True),
        "B, 33 modes": ("catalog_b.json", "cases_b.jsonl", False),
    }
    for name, (catalog_file, cases_file, seed_only) in sets.items():
        catalog, cases = dataset(catalog_file, cases_file, seed_only=seed_only)
        print(f"\n{name}: {len(cases)} cases ({sum(c.source == 'case' for c in cases)} written, the rest the modes' "
              f"example utterances, each scored without its own text)")
        print("  threshold  " + "  ".join(f"{t:>5}" for t in THRESHOLDS))
        print("  embedding  " + "  ".join(f"{accuracy(catalog, cases, OfflineScorer(t)):>5.1%}" for t in THRESHOLDS))
        print("  threshold  " + "  ".join(f"{t:>5}" for t in BM25_THRESHOLDS))
        print("  BM25       " + "  ".join(f"{accuracy(catalog, cases, Bm25Scorer(t)):>5.1%}" for t in BM25_THRESHOLDS))
    catalog, cases = dataset("catalog.json", "cases.jsonl", seed_only=False)
    cases = (cases * 2)[:300]
    for scorer in (OfflineScorer(), Bm25Scorer(8.0)):
        rounds = []
        for _ in range(5):
            started = time.perf_counter()
            list(scorer.outcomes(catalog, cases))
            rounds.append(time.perf_counter() - started)
        print(f"\n{type(scorer).__name__}: 300 cases on 33 modes in {sorted(rounds)[2] * 1000:.0f} ms (median of 5).")


def dataset(catalog_file, cases_file, *, seed_only):
    from modes.catalog import Catalog
    from modes.models import RoutingCase
    from modes.portable import document_rows
    from modes.routing.cases import catalog_cases

    modes, tools = document_rows(json.loads((HERE / catalog_file).read_text()))
    if seed_only:
        modes = [mode for mode in modes if mode.key in ("general", "ddr_authoring", "workflow_authoring")]
    catalog = Catalog(0, tuple(modes), tuple(tools))
    rows = [json.loads(line) for line in (HERE / cases_file).read_text().splitlines() if line.strip()]
    stored = [RoutingCase(utterance=row["utterance"], current_mode=row.get("currentMode", ""), expected=row["expected"])
              for row in rows]
    cases, skipped = catalog_cases(catalog, stored)
    assert not skipped, skipped
    return catalog, cases


def accuracy(catalog, cases, scorer) -> float:
    from modes.routing.evaluation import measure

    outcomes = list(scorer.outcomes(catalog, cases))
    return measure(cases, outcomes, labels=[mode.key for mode in catalog.modes])["accuracy"]


class Bm25Scorer:
    """The lexical ranker compared: BM25 over each mode's routing text as one document, less the case's own text."""

    name = "bm25"

    def __init__(self, threshold):
        self.threshold = threshold

    def outcomes(self, catalog, cases):
        from rank_bm25 import BM25Okapi

        from modes.models import ROUTING_STAY
        from modes.routing.evaluation import Outcome

        indexes = {}
        for case in cases:
            if case.utterance not in indexes:
                documents = [
                    [word for text in (mode.when_to_use, mode.description, *mode.example_utterances)
                     if text != case.utterance for word in words(text)]
                    for mode in catalog.modes
                ]
                indexes[case.utterance] = BM25Okapi(documents)
            scores = indexes[case.utterance].get_scores(words(case.utterance))
            top = int(scores.argmax())
            key = catalog.modes[top].key if scores[top] >= self.threshold else ROUTING_STAY
            yield Outcome(ROUTING_STAY if key == case.current_mode else key)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


if __name__ == "__main__":
    main()
