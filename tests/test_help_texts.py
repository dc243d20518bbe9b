"""Every command line's --help explains itself: a description of what the command is for, and a help
text for every flag, positional argument and subcommand (README: "--help explains every flag").

The parsers are taken in-process: each entry point's ``main([])`` is run with ``parse_args`` replaced
by a stub that hands back the parser it was called on, so no command does any work and no entry point
needs to expose its parser for the test's sake."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Every module or script with a command line (``if __name__ == "__main__"``), except
#: ``highway_env/play/agent_worker.py`` and ``highway_env/ray_node_watch.py``: child processes (the
#: play server's, a Ray driver's notice process), started with fixed arguments.
MODULES = ["highway_env.solver.__main__", "highway_env.solver.book", "highway_env.evaluation.positions",
           "highway_env.demo", "highway_env.play.__main__", "highway_env.play.screenshot",
           "highway_env.rushhour.__main__", "highway_env.blackpath.__main__", "highway_env.jumping.__main__"]
SCRIPTS = ["train.py", "evaluate.py", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "bench").glob("bench_*.py")),
           "examples/rllib_ppo_masked.py", "examples/sb3_maskable_ppo_selfplay.py", "examples/tianshou_dqn_vs_random.py",
           "examples/torchrl_collect.py", "examples/vector_ppo_selfplay.py"]
NOT_COMMANDS = {"highway_env/play/agent_worker.py", "highway_env/ray_node_watch.py"}


class _Parser(Exception):
    def __init__(self, parser):
        super().__init__()
        self.parser = parser


def _parser_of(entry: str, monkeypatch) -> argparse.ArgumentParser:
    def stop(self, *args, **kwargs):
        raise _Parser(self)

    monkeypatch.setattr(sys, "path", list(sys.path))  # scripts that extend sys.path leave it as it was
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", stop)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", stop)
    if entry.endswith(".py"):
        path = ROOT / entry
        sys.path.insert(0, str(path.parent))  # the recipes import their sibling recipe_common
        spec = importlib.util.spec_from_file_location(f"_help_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(entry)
    with pytest.raises(_Parser) as caught:
        module.main([])
    return caught.value.parser


def _parsers(parser, name):
    """The parser and its subcommands' parsers, each with its command name."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            listed = {a.dest: a.help for a in action._choices_actions}
            for sub_name, sub in action.choices.items():
                assert listed.get(sub_name), f"{name} {sub_name}: the subcommand has no help line in {name} --help"
                yield from _parsers(sub, f"{name} {sub_name}")


def test_every_command_line_is_listed():
    found = {str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")
             if p.parts[len(ROOT.parts)] in ("highway_env", "agents", "bench", "examples") or p.parent == ROOT
             if 'if __name__ == "__main__"' in p.read_text()}
    listed = {m.replace(".", "/") + ".py" for m in MODULES} | set(SCRIPTS) | NOT_COMMANDS
    assert found <= listed, f"command lines missing from this test: {sorted(found - listed)}"


@pytest.mark.parametrize("entry", MODULES + SCRIPTS)
def test_help_describes_the_command_and_every_flag(entry, monkeypatch):
    parser = _parser_of(entry, monkeypatch)
    for name, p in _parsers(parser, entry):
        assert (p.description or "").strip(), f"{name}: --help has no description of what the command is for"
        p.format_help()  # a stray '%' in a help text breaks --help
        for action in p._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            flag = "/".join(action.option_strings) or action.dest
            assert action.help and action.help != argparse.SUPPRESS and len(action.help.strip()) > 5, \
                f"{name} {flag}: no help text"
            # What --help prints (with the default an ArgumentDefaultsHelpFormatter appends): a flag
            # that takes a value says its default, unless it has none (None, a boolean switch, [])
            shown = p._get_formatter()._expand_help(action)
            default = action.default
            if action.nargs != 0 and default not in (None, argparse.SUPPRESS, []) and not isinstance(default, bool):
                assert "default" in shown.lower(), f"{name} {flag}: the help does not give the default ({default!r}): {shown!r}"
            # a tight range (highway_env.cli_args.number) is in the help: OneLineErrorParser adds it
            if getattr(action.type, "bounded", False):
                assert action.type.allowed.removeprefix("in ") in shown, f"{name} {flag}: no allowed range in {shown!r}"


def test_a_hidden_flag_stays_hidden_with_its_range():
    """OneLineErrorParser appends a tight range to a flag's help; a help of argparse.SUPPRESS (a flag
    kept out of --help) must stay that, not turn into a listed '==SUPPRESS== (in 10..30)'."""
    from highway_env.cli_args import OneLineErrorParser, tt_bits_arg

    p = OneLineErrorParser(description="d")
    p.add_argument("--hidden", type=tt_bits_arg, default=20, help=argparse.SUPPRESS)
    p.add_argument("--shown", type=tt_bits_arg, default=20, help="table bits (default 20)")
    text = p.format_help()
    assert "--hidden" not in text and "SUPPRESS" not in text and "(in 10..30)" in text


def test_the_game_flags_name_every_game_of_the_registry(monkeypatch):
    """train.py's and evaluate.py's --game help list the games of agents.games.GAMES (it was fixed
    text: a game added to GAMES was missing from both)."""
    import dataclasses

    import agents.games
    import evaluate
    from agents.config import TrainConfig

    game_help = next(f for f in dataclasses.fields(TrainConfig) if f.name == "game").metadata["help"]
    assert all(name in game_help for name in agents.games.GAMES)
    monkeypatch.setitem(agents.games.GAMES, "newgame", "somewhere:NewGame")
    assert "newgame" in evaluate.build_parser().format_help()
