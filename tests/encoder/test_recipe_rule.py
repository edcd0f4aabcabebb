"""The recipe rule's verdict (bench/recipe_rule.py): sense AUC decides, within a perplexity line, ties by perplexity."""

from bench.recipe_rule import verdict


def result(perplexity: float, auc: float) -> dict:
    return {"perplexity": perplexity, "auc": {"layer 2": auc}}


def test_the_highest_sense_auc_wins_among_candidates_near_the_lowest_perplexity():
    results = {"a": result(100.0, 60.0), "b": result(104.0, 63.0), "c": result(110.0, 70.0)}
    winner, why = verdict(results)
    assert winner == "b"  # c separates senses best but is 10 % above the lowest perplexity
    assert "over the 5% line: c" in why


def test_near_ties_in_auc_go_to_the_lower_perplexity():
    winner, _ = verdict({"a": result(100.0, 62.5), "b": result(103.0, 63.0)})
    assert winner == "a"
    winner, _ = verdict({"a": result(100.0, 61.5), "b": result(103.0, 63.0)})
    assert winner == "b"
