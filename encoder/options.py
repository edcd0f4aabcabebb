"""Command-line options made from a config dataclass: each field's option declared once, in its ``metadata``.

A field's ``metadata`` (made by ``option``) holds the help of its option, the rule of a numeric field
(``numbers.Number``: the option's argparse ``type``, and what the config's own check applies: ``rules``) and how the
option is spelled when it is not ``--the-field-name``. ``add_options`` adds a dataclass's options to a parser in field
order and ``given`` reads them back as keyword arguments of the dataclass, so adding an option is adding a field.
``indexer.settings.Settings`` (``build``) and ``encoder.train_config.TrainConfig`` (``train``) are made so.

The rest follows from the field: one without a default is a required option; a boolean one is a flag (``store_true``,
or with a ``flag`` spelled like ``--no-progress``, ``store_false`` for one that is on by default); any other takes a
value, with the field's default.
"""

from __future__ import annotations

import argparse
from dataclasses import MISSING, Field, fields
from typing import Any

from .numbers import Number


def option(
    help: str | None,
    *,
    rule: Number | None = None,
    flag: str | None = None,
    unset: bool = False,
    **argparse_options: Any,
) -> dict:
    """A field's ``metadata``: its option's ``help`` (None: the field has no option), the ``rule`` of a numeric field,
    the ``flag`` when the option is not spelled ``--the-field-name`` (``--continue``, ``--no-exact-tokens``), and
    ``unset``: the option is absent from the parsed options unless given (something else, a recipe, fills the field
    then; ``%(default)s`` in its help is the field's default). Other keywords go to ``argparse`` as they are
    (``choices``, ``metavar``, ``nargs``, a ``default`` of the option's own)."""
    return {"help": help, "rule": rule, "flag": flag, "unset": unset, "argparse": argparse_options}


def option_fields(config: type) -> list[Field]:
    """The fields of the dataclass ``config`` that have an option, in field order."""
    return [field for field in fields(config) if field.metadata.get("help") is not None]


def rules(config: type) -> dict[str, Number]:
    """The rule of every numeric field of the dataclass ``config``, by field name."""
    return {field.name: field.metadata["rule"] for field in fields(config) if field.metadata.get("rule") is not None}


def flag_of(field: Field) -> str:
    """How ``field``'s option is spelled: its ``flag``, else ``--the-field-name``."""
    return field.metadata.get("flag") or "--" + field.name.replace("_", "-")


def add_options(parser: argparse.ArgumentParser, config: type) -> None:
    """Add an option for each field of the dataclass ``config`` that has one (``option``), in field order."""
    for field in option_fields(config):
        spec = field.metadata
        options = {"dest": field.name, "help": spec["help"], **spec["argparse"]}
        if field.default is MISSING and field.default_factory is MISSING:
            options["required"] = True
        elif field.type in (bool, "bool"):
            options["action"] = "store_false" if field.default else "store_true"
        else:
            options = {"type": spec["rule"], "default": field.default, **options}
        if spec["unset"]:
            options |= {"default": argparse.SUPPRESS, "help": spec["help"].replace("%(default)s", str(field.default))}
        parser.add_argument(flag_of(field), **options)


def given(args: argparse.Namespace, config: type) -> dict[str, Any]:
    """The keyword arguments of ``config`` that the parsed options ``args`` hold (an ``unset`` option not given is
    absent, and so is a field without an option)."""
    return {field.name: getattr(args, field.name) for field in option_fields(config) if hasattr(args, field.name)}


def check_keywords(config: type, keywords: dict[str, Any], what: str) -> None:
    """Refuse keyword arguments that are no field of the dataclass ``config`` (a ``TypeError`` naming them and the
    fields; ``what``: what its fields are called, "setting", "reader option"), before anything is made of them."""
    names = [f.name for f in fields(config)]
    unknown = sorted(set(keywords) - set(names))
    if unknown:
        raise TypeError(
            f"unknown {what if len(unknown) == 1 else what + 's'}: {', '.join(unknown)}; known: {', '.join(names)}"
        )
