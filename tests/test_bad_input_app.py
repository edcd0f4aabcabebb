"""Bad input and faults: `python -m app` and the Streamlit pages.

The rows of this command's tables; tests/bad_input.py runs them and says what each outcome means.
"""

from __future__ import annotations

from pathlib import Path

from bad_input import (
    BIG_QUERY,
    CONTROL,
    EMOJI,
    ERROR,
    MARKDOWN,
    USAGE,
    WORKS,
    Cmd,
    Ctx,
    World,
    app_on,
    app_test,
    cli_test,
    edit_json,
    lines,
    manifest,
    messages,
    one_sentence,
)

CLI = [
    Cmd(
        "app --help",
        lambda c: ["app", "--help"],
        WORKS,
        "--rebuild",
        check=lambda out: out.startswith("usage: python -m app"),
    ),
    Cmd("app port abc", lambda c: ["app", "--port", "abc"], USAGE, "--port: must be a whole number from 1 to 65,535"),
    Cmd(
        "app index is a file",
        lambda c: ["app", "--index", lines(c, "mine"), "--model", str(c.model)],
        ERROR,
        "lines.txt is a file, not an index folder",
    ),
    Cmd(
        "app with a missing model",
        lambda c: ["app", "--index", str(c.tmp / "i"), "--model", str(c.tmp / "m"), "--build"],
        ERROR,
        "there is no model",
    ),
    Cmd(
        "app with a missing GloVe",
        lambda c: [
            *["app", "--index", str(c.tmp / "i"), "--build"],
            *["--model", str(c.model), "--glove", str(c.tmp / "g.txt")],
        ],
        ERROR,
        "g.txt does not exist",
    ),
    Cmd(
        "app index with a broken manifest",
        lambda c: ["app", "--index", str(c.index), "--model", str(c.model)],
        ERROR,
        "manifest.json",
        setup=lambda c: manifest(c).write_text("{"),
    ),
    # ---- the app rebuilds only the demo index it built itself (and says how to rebuild any other)
    Cmd(
        "app on an index it did not build, made with the demo's model and a trained GloVe",
        lambda c: ["app", "--index", str(c.index), "--model", str(c.model)],
        WORKS,
        "Using the index in .*index",
    ),
    Cmd(
        "app --rebuild on an index it did not build",
        lambda c: ["app", "--index", str(c.index), "--model", str(c.model), "--rebuild"],
        ERROR,
        "index is not the demo index this app built, so the app will not rebuild it \\(--rebuild asks.*\\); rebuild it "
        "from its own corpus with: python -m indexer build --corpus .*corpus/docs.jsonl .* --out .*index --model .* "
        "--overwrite",
    ),
    Cmd(
        "app on an index of an older format it did not build",
        lambda c: ["app", "--index", str(c.index), "--model", str(c.model)],
        ERROR,
        "not the demo index this app built.*index format 3.*: python -m indexer build --corpus .* --overwrite",
        setup=lambda c: edit_json(manifest(c), lambda m: {**m, "format_version": 3}),
    ),
    Cmd(
        "app on an index whose model changed since it was built",
        lambda c: ["app", "--index", str(c.index)],
        ERROR,
        "not the demo index this app built, .* \\(its model .* has changed since it was built\\); rebuild it",
        setup=lambda c: edit_json(manifest(c), lambda m: {**m, "model": {**m["model"], "hash": "0" * 16}}),
    ),
    Cmd(
        "app --index a folder that does not exist",
        lambda c: ["app", "--index", str(c.tmp / "nowhere"), "--model", str(c.model)],
        ERROR,
        "nowhere holds no index; give the folder of an index, or pass --build to build the demo index there",
    ),
    Cmd(
        "app --index an empty folder",
        lambda c: ["app", "--index", str(c.tmp / "in"), "--model", str(c.model)],
        ERROR,
        "in holds no index; .*--build",
        setup=lambda c: (c.tmp / "in").mkdir(),
    ),
]


APP = [
    # (case, page, URL parameters, what the user does, what the page must show)
    (
        "search emoji and control characters",
        None,
        {},
        lambda at: at.text_input(key="ui.search.query").set_value(EMOJI + CONTROL).run(),
        lambda at: sum(m.value.startswith("**1. ") for m in at.markdown) == 2,  # a first hit in each tab
    ),
    (
        "search whitespace only",
        None,
        {},
        lambda at: at.text_input(key="ui.search.query").set_value(" \t ").run(),
        lambda at: "Type a query" in messages(at.info),
    ),
    (
        "a URL with a 100,000-character query and bad options",  # Streamlit drops URLs over 512 KB
        None,
        {"q": BIG_QUERY[:100_000], "k": "-5", "method": "magic", "layers": "nan,1,1"},
        lambda at: at,
        lambda at: (  # each value is refused whole (longer than the query box allows), not cut: the defaults
            at.text_input(key="ui.search.query").value == ""
            and at.slider(key="ui.search.k").value == 10
            and at.radio(key="ui.search.method").value == "hybrid"
        ),
    ),
    (
        "word in context: a sentence of punctuation",
        "views/word_in_context.py",
        {},
        lambda at: one_sentence(at, "?!"),
        lambda at: "This sentence has no word the collection holds" in messages(at.info),
    ),
    (
        "senses of an emoji",
        "views/senses.py",
        {},
        lambda at: at.text_input(key="ui.senses.word").set_value("🏦").run(),
        lambda at: "'🏦' does not occur" in messages(at.warning),
    ),
    (  # a typed word in a message is text, not a link and a remote image
        "senses of a word typed as markdown",
        "views/senses.py",
        {},
        lambda at: at.text_input(key="ui.senses.word").set_value(MARKDOWN).run(),
        lambda at: "as several words" in messages(at.info) and "](http" not in messages(at.info),
    ),
    (
        "a URL with k=² and k=1e999",  # digits that are not ASCII, a number beyond a float: the default
        None,
        {"k": "²", "method": "keywords"},
        lambda at: at,
        lambda at: at.slider(key="ui.search.k").value == 10 and at.radio(key="ui.search.method").value == "keywords",
    ),
]


test_cli = cli_test(CLI)


test_app = app_test(APP)


def test_app_on_a_file_says_there_is_no_index(world: World, tmp_path: Path) -> None:
    c = Ctx(world, tmp_path)
    at = app_on(c.file("notes.txt", "mine"))
    assert not at.exception and "There is no index" in messages(at.error)
    assert (tmp_path / "in" / "notes.txt").read_text() == "mine"
