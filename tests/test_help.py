"""Every verb's and sub-verb's --help: exit 0, no traceback, and a percent sign in a help
string reads as one."""

import argparse

import pytest

from conftest import commscope


def _verbs(parser: argparse.ArgumentParser, path: tuple = ()) -> list[tuple]:
    """Every command path the parser knows: ("results", "show"), ("probe", "protocols")..."""
    paths = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                paths.append((*path, name))
                paths.extend(_verbs(sub, (*path, name)))
    return paths


def _all_verbs() -> list[tuple]:
    from commscope.cli import VERBS, parser

    paths = []
    for verb in VERBS:  # each verb's options are only built when it is the one named
        paths.extend(p for p in _verbs(parser(verb)) if p[0] == verb)
    return paths


@pytest.mark.parametrize("path", _all_verbs(), ids=" ".join)
def test_help_works(path):
    done = commscope(*path, "--help")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert done.stdout.startswith("usage: commscope " + " ".join(path))
    assert "%%" not in done.stdout  # written once as it reads, escaped in one place


def test_a_lone_percent_in_option_help_is_escaped_once():
    from commscope.cli import _Parser

    p = _Parser(prog="x")
    p.add_argument("--t", default=3, help="within 5%; default %(default)s; 1%% stays 1%")
    assert "within 5%; default 3; 1% stays 1%" in " ".join(p.format_help().split())


def test_the_glossary_in_the_docs_is_the_one_the_tables_use():
    """docs/usage.md's glossary lists every term the footers define, word for word."""
    from pathlib import Path

    from commscope.views.glossary import GLOSSARY

    usage = (Path(__file__).parent.parent / "docs" / "usage.md").read_text()
    for term, meaning in GLOSSARY.items():
        assert f"| {term} | {meaning} |" in usage, term
