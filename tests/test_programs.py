"""The three programs as a user meets them: usage lines under the name they were started by, ``--version``,
messages that name the paths of an installed copy, and a README that says how to run them."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from encoder.commands import SCRIPTS

REPO = Path(__file__).resolve().parents[1]
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


def started(command: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # this checkout's code, whichever one the scripts were installed from
    return subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=env, timeout=300)


PARSERS = {
    "app": lambda: __import__("app.__main__").__main__.parse_args(["--help"]),
    "encoder": lambda: __import__("encoder.__main__").__main__.build_parser().parse_args(["--help"]),
    "indexer": lambda: __import__("indexer.__main__").__main__.make_parser().parse_args(["--help"]),
}


@pytest.mark.parametrize("package", list(SCRIPTS))
@pytest.mark.parametrize("argv0", ["console script", "python -m"])
def test_usage_names_the_program_as_it_was_started(package, argv0, monkeypatch, capsys):
    started_as = f"/somewhere/bin/{SCRIPTS[package]}" if argv0 == "console script" else f"/x/{package}/__main__.py"
    monkeypatch.setattr(sys, "argv", [started_as])
    with pytest.raises(SystemExit):
        PARSERS[package]()
    name = SCRIPTS[package] if argv0 == "console script" else f"python -m {package}"
    assert capsys.readouterr().out.startswith(f"usage: {name} ")


@pytest.mark.parametrize("package", list(SCRIPTS))
def test_each_console_script_says_its_version(package):
    script = Path(sys.executable).with_name(SCRIPTS[package])
    if not script.is_file():
        pytest.skip(f"{script.name} is not installed in this environment (make install installs it)")
    version = started([str(script), "--version"])
    assert version.returncode == 0 and version.stdout.strip() == f"{SCRIPTS[package]} {VERSION}"


@pytest.mark.parametrize("package", list(SCRIPTS))
def test_each_programs_help_is_written_for_users(package, monkeypatch, capsys):
    """``--help`` opens with what the program does, in plain text: no reStructuredText markup of a docstring, no
    ``python -m`` of a developer."""
    monkeypatch.setattr(sys, "argv", [f"/somewhere/bin/{SCRIPTS[package]}"])
    with pytest.raises(SystemExit):
        PARSERS[package]()
    description = capsys.readouterr().out.split("\n\n")[1]
    assert description.strip() and "``" not in description and "python -m" not in description


def sub_commands(package: str) -> dict[str, argparse.ArgumentParser]:
    """Each sub-command's parser of the encoder's and the indexer's command lines, by name."""
    import encoder.__main__
    import indexer.__main__

    parser = {"encoder": encoder.__main__.build_parser, "indexer": indexer.__main__.make_parser}[package]()
    (commands,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return dict(commands.choices)


@pytest.mark.parametrize("package", ["encoder", "indexer"])
def test_each_commands_help_is_written_for_users(package):
    """Every sub-command's ``--help`` is written for users, not a module's docstring with its markup."""
    shown = [name for name, command in sub_commands(package).items() if "``" in command.format_help()]
    assert not shown, f"{package}: the help of {', '.join(shown)} shows docstring markup"


def test_an_installed_copy_names_its_own_paths(tmp_path, monkeypatch, capsys):
    """Where no checkout is (an installed package), a missing demo corpus names the installed folder and how to
    restore it, not a path or a git command of a checkout."""
    import app.__main__ as app_main
    from demo.corpora import DEMOS, Demo

    monkeypatch.setattr(app_main, "checkout_root", lambda: None)
    monkeypatch.setitem(DEMOS, "en", Demo("English", tmp_path / "demo", "default", "stanford", tmp_path / "index"))
    with pytest.raises(SystemExit):
        app_main.ensure_index(tmp_path / "index", "default", False, "stanford", "en")
    error = capsys.readouterr().err
    assert f"({tmp_path / 'demo'}/*.jsonl) is missing" in error and "pip install --force-reinstall" in error
    assert "git checkout" not in error and "data/demo" not in error


def test_the_readme_says_how_to_run_the_commands_and_stays_short():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    assert "source .venv/bin/activate" in readme
    assert all(f"`{script}`" in readme for script in SCRIPTS.values())


def test_no_message_counts_in_parenthesised_plurals():
    """What the programs say counts in words ("1 rank", "2 ranks": ``encoder.terminal.counted``), never "rank(s)"."""
    said = re.compile(r"""["'][^"'\n]*(?:(?<![\w.])[a-z]+|\})\(s\)[\s:,;.][^"'\n]*["']""")
    found = [
        f"{path.relative_to(REPO)}:{number}"
        for folder in ("encoder", "indexer", "app", "demo")
        for path in sorted((REPO / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if said.search(line)
    ]
    assert found == []
