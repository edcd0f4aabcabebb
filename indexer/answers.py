"""Each question's answer as the command line's ``--json`` and the HTTP API give it: one schema for both
(docs/indexer.md), made from an opened ``Index`` and the question's options type (``indexer.options``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from encoder import LayerMix
from encoder.cli import frame

from .errors import IndexerError
from .index import Index
from .options import NeighborsOptions, SearchOptions, SensesOptions
from .queries import MAX_QUERY_CHARS
from .ranking import method_name
from .results import as_dict


def answer_or_error(question: Callable[[], Any]) -> Any:
    """A question's result with its ``notices`` (an empty list for a command that has none: one schema), or
    ``{"error": ...}`` where it fails on bad input, a missing or damaged file, too little memory or an
    ``IndexerError`` (``encoder.cli.frame.answer_or_error``); an ``int`` (the exit status of a command that printed
    its own output) as it is."""
    result = frame.answer_or_error(question, (IndexerError,))
    if isinstance(result, int) or "error" in result:
        return result
    return with_notices(result)


def with_notices(result: dict) -> dict:
    """An answer with its ``notices``: an empty list for a question that has none (one schema for every answer)."""
    return {**result, "notices": result.get("notices", [])}


def search_answers(index: Index, queries: list[str], options: SearchOptions) -> list[dict]:
    """The answers to ``queries`` under one set of options: the top k documents (``above_line`` marks those better
    than chance), or with ``options.sentences`` the nearest sentences. Documents are searched as one batch
    (``Index.search`` of a list)."""
    lists = [("results", "elmo" if options.sentences else options.method)] + [("glove", "glove")] * options.baseline
    found: dict[str, list] = {}
    spelling = not options.as_typed
    for name, method in lists:
        if options.sentences:
            layers = options.layers if method == "elmo" else None
            found[name] = [index.search_sentences(query, options.k, method, layers, spelling) for query in queries]
        else:  # one query alone: its errors are its own, not "query 0 of the list"
            asked = queries if len(queries) > 1 else queries[0]
            searched = index.search(asked, options.k, method, options.layers, spelling=spelling)
            found[name] = searched if len(queries) > 1 else [searched]
    weights = (  # valid: the searches checked them
        LayerMix.parse(options.layers, index.elmo.n_layers).weights if options.layers else index.search_mix.weights
    )
    result = []
    for i, query in enumerate(queries):
        answer = {
            "query": query[:MAX_QUERY_CHARS],
            "k": options.k,
            "method": "elmo" if options.sentences else options.method,  # sentences: ELMo's, whatever the default
            "layers": options.layers or index.manifest.search_layers.spec,
            "sentences": options.sentences,
        }
        if not options.sentences:  # documents: the method in words
            answer["method_name"] = method_name(options.method, weights)
        respelled = (found[name][i].searched_for for name, _ in lists if found[name][i].searched_for)
        answer["searched_for"] = next(respelled, None)  # the query as searched (respelled), or None
        for name, _ in lists:  # each list with its own notices: "no good match" may hold for one and not the other
            answer[name] = [as_dict(h) for h in found[name][i]]
            answer["notices" if name == "results" else f"{name}_notices"] = list(found[name][i].notices)
        result.append(answer)
    return result


def search_each(index: Index, queries: list[str], options: SearchOptions) -> list[dict]:
    """Each query's answer or its ``{"error": ...}``, in order: searched as one batch, and where the batch fails,
    one by one, so that only the queries at fault get an error."""
    together = answer_or_error(lambda: {"answers": search_answers(index, queries, options)})
    if "error" not in together:
        return together["answers"]
    return [answer_or_error(lambda query=query: search_answers(index, [query], options)[0]) for query in queries]


def neighbors_answer(index: Index, sentence: str, word: str, options: NeighborsOptions) -> dict:
    """The nearest uses of ``word`` as used in ``sentence`` (and GloVe's nearest words)."""
    found = index.neighbors(sentence, word, **asdict(options))
    return {"sentence": sentence[:MAX_QUERY_CHARS], "word": word, **as_dict(found)}


def senses_answer(index: Index, word: str, options: SensesOptions) -> dict:
    """The senses of ``word``: clusters of its uses."""
    return as_dict(index.senses(word, **asdict(options)))
