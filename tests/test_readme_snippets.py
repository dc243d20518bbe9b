"""What the docs tell a user to paste works as written.

Every ```python block of README.md and agents/README.md, found by parsing the markdown (a new block
is picked up by itself), runs in a fresh interpreter from an empty directory, as a user's own script
would, with this checkout on ``PYTHONPATH``. A block is named by its file and line in the failure.
Blocks too slow for the default suite are listed in ``SLOW`` (run with ``-m slow``), blocks that
cannot run as they stand in ``SKIP``, each keyed by a marker, a piece of text that must occur in
exactly one block, and each with its reason; a marker that matches no block fails, so neither list
can outlive the block it names. A block that needs an optional extra skips without it, except under
CI=true (``tests/optional_parts.py``). Every relative link of README.md, agents/README.md and
CONTRIBUTING.md must reach a file and, for a markdown file, a heading; every ``--flag`` of a
``python SCRIPT`` / ``python -m MODULE`` command line they and the recipes' docstrings show must be
in that command's ``--help`` (slow)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from optional_parts import require_modules

ROOT = Path(__file__).resolve().parents[1]
SNIPPET_DOCS = ("README.md", "agents/README.md")
LINKED_DOCS = ("README.md", "agents/README.md", "CONTRIBUTING.md")
TIMEOUT_S = 600
CHILD_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
             "MPLBACKEND": "Agg"}  # this checkout's code, in every child process

# marker -> why the block is too slow for the default suite (it still runs under -m slow)
SLOW = {
    "mcts.MCTSBot(game, 2.0, 200,":
        "grades OpenSpiel's Python MCTSBot (200 simulations a move) on 3,000 positions and 48 games: "
        "about 2.5 minutes on 2 cores",
    "play_match(az, opp, agents.get_game()":
        "64 games of the shipped agent (PUCT 400) against mcts:300: about 50 s on 2 cores",
}
# marker -> why the block cannot run as it stands (it is still compiled)
SKIP: dict[str, str] = {}
# marker -> text its output must contain: what the block's comments claim it prints
EXPECTED_OUTPUT = {
    "print(evaluate_bots.evaluate_bots(state, [a, b], np.random.RandomState(0)))": "[1.0, -1.0]",
}
# a block importing one of these modules needs the extra named
EXTRA_OF_MODULE = {"pyspiel": "openspiel", "open_spiel": "openspiel", "highway_env.openspiel": "openspiel",
                   "shimmy": "openspiel", "sb3_contrib": "sb3", "stable_baselines3": "sb3", "ray": "rllib",
                   "torchrl": "torchrl", "tensordict": "torchrl"}


class Block(NamedTuple):
    doc: str
    line: int   # the line of the block's first code line
    code: str

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def fenced_blocks(text: str) -> list[tuple[int, str, str]]:
    """(first code line, info string, code) of each fenced code block of markdown ``text``."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        opening = re.match(r" {0,3}(`{3,}|~{3,})\s*(\S*)", lines[i])
        if not opening:
            i += 1
            continue
        fence, info = opening.groups()
        j = i + 1
        while j < len(lines) and not re.match(rf" {{0,3}}{fence[0]}{{{len(fence)},}}\s*$", lines[j]):
            j += 1
        blocks.append((i + 2, info, "\n".join(lines[i + 1:j]) + "\n"))
        i = j + 1
    return blocks


def python_blocks() -> list[Block]:
    return [Block(doc, line, code) for doc in SNIPPET_DOCS
            for line, info, code in fenced_blocks((ROOT / doc).read_text(encoding="utf-8")) if info == "python"]


BLOCKS = python_blocks()


def listed(block: Block, table: dict[str, str]) -> str | None:
    """The marker of ``table`` that names ``block``, if any."""
    return next((marker for marker in table if marker in block.code), None)


def extra_imports(code: str) -> dict[str, str]:
    """The modules of optional extras that ``code`` imports, with their extras."""
    found = {}
    for node in ast.walk(ast.parse(code)):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        for name in names:
            for module, extra in EXTRA_OF_MODULE.items():
                if name == module or name.startswith(module + "."):
                    found[name] = extra
    return found


def test_the_docs_have_python_blocks():
    assert len(BLOCKS) >= 5, [b.where for b in BLOCKS]


@pytest.mark.parametrize("table", ["SLOW", "SKIP", "EXPECTED_OUTPUT"])
def test_every_listed_marker_names_exactly_one_block(table):
    for marker in globals()[table]:
        found = [b.where for b in BLOCKS if marker in b.code]
        assert len(found) == 1, f"{table} marker {marker!r} matches {found or 'no block'}: update the list"


@pytest.mark.parametrize("block", [pytest.param(b, id=b.where) for b in BLOCKS])
def test_block_compiles(block):
    try:
        compile(block.code, block.where, "exec")
    except SyntaxError as e:
        pytest.fail(f"{block.where}: the ```python block does not compile: {e}", pytrace=False)


@pytest.mark.parametrize("block", [pytest.param(b, id=b.where, marks=[pytest.mark.slow] if listed(b, SLOW) else [])
                                   for b in BLOCKS])
def test_block_runs_as_written(block, tmp_path):
    if listed(block, SKIP):
        pytest.skip(f"{block.where}: {SKIP[listed(block, SKIP)]}")
    for module, extra in extra_imports(block.code).items():
        require_modules(f"{block.where} snippet", f"{extra} extra", (module,), f'pip install -e ".[{extra}]"')
    try:  # from an empty directory, as a user's own script
        code = "\n" * (block.line - 1) + block.code  # so that a traceback gives the doc's line numbers
        run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=CHILD_ENV, capture_output=True, text=True,
                             timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{block.where}: the ```python block ran past {TIMEOUT_S} s", pytrace=False)
    if run.returncode != 0:
        pytest.fail(f"{block.where}: the ```python block failed (exit {run.returncode}; the traceback's lines are "
                    f"{block.doc}'s):\n{run.stderr[-3000:]}", pytrace=False)
    expected = listed(block, EXPECTED_OUTPUT)
    if expected:
        assert EXPECTED_OUTPUT[expected] in run.stdout, (
            f"{block.where}: the block says it prints {EXPECTED_OUTPUT[expected]!r}; it printed:\n{run.stdout[-2000:]}")


# --- relative links

def heading_anchors(text: str) -> set[str]:
    """GitHub's anchors of the markdown headings outside code blocks (a repeated one gets -1, -2, ...)."""
    in_code = {n for first, _, code in fenced_blocks(text) for n in range(first - 1, first + code.count("\n") + 1)}
    anchors, seen = set(), {}
    for n, line in enumerate(text.splitlines(), 1):
        heading = re.match(r"#{1,6}\s+(.+?)\s*#*\s*$", line)
        if heading and n not in in_code:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def broken_links(doc: Path) -> list[str]:
    """Each relative link of ``doc`` whose file does not exist or, in a markdown file, whose anchor is no heading."""
    text, broken = doc.read_text(encoding="utf-8"), []
    for m in re.finditer(r"\]\(([^)\s]+)\)", text):
        target = m.group(1)
        if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = doc.parent / path if path else doc
        where = f"{doc.name}:{text.count(chr(10), 0, m.start()) + 1}: ({target})"
        if not dest.exists():
            broken.append(f"{where}: no file {path}")
        elif anchor and dest.suffix == ".md" and anchor not in heading_anchors(dest.read_text(encoding="utf-8")):
            broken.append(f"{where}: no heading with the anchor #{anchor} in {dest.name}")
    return broken


@pytest.mark.parametrize("doc", LINKED_DOCS)
def test_relative_links_reach_a_file_and_heading(doc):
    assert not broken_links(ROOT / doc), "\n".join(broken_links(ROOT / doc))


def test_broken_links_are_found(tmp_path):
    (tmp_path / "other.md").write_text("# Other page\n\n```bash\n# not a heading\n```\n")
    doc = tmp_path / "doc.md"
    doc.write_text("# Top: the page\n[a](other.md#other-page) [b](#top-the-page) [c](https://x.org/#y)\n"
                   "[d](missing.md) [e](other.md#not-a-heading) [f](#nowhere)\n")
    assert [line.split(": ", 2)[1] for line in broken_links(doc)] == [
        "(missing.md)", "(other.md#not-a-heading)", "(#nowhere)"]


# --- documented command lines: every flag is one the command's --help lists

COMMAND = re.compile(r"(?:^\s*|`|&& )(?:nice -n \d+ |/usr/bin/time -v )?python (-m [\w.]+|[\w/]+\.py)([^`#&|\n]*)", re.M)
NOT_OURS = ("-m pytest", "-m build", "-m venv", "examples/NAME.py")  # not the project's, or a placeholder
COMMAND_DOCS = (*LINKED_DOCS, *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").glob("*.py")))  # their usage


def documented_commands() -> dict[tuple[str, ...], list[tuple[str, list[str]]]]:
    """Each program the docs run (script or module, then its subcommands) -> [(where, the flags used)]."""
    commands: dict[tuple[str, ...], list[tuple[str, list[str]]]] = {}
    for doc in COMMAND_DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        for m in COMMAND.finditer(text):
            program, rest = m.groups()
            if program in NOT_OURS or rest[:1] not in ("", " "):  # `python -m highway_env.<game> solve`
                continue
            argv = tuple(program.split())
            if program.startswith("-m "):  # subcommands: `solver store verify`, `positions build`
                argv += tuple(re.match(r"((?:\s+[a-z][a-z-]*(?=\s|$))*)", rest).group(1).split())
            flags = [f.split("=")[0] for f in re.findall(r"(?<![\w-])--[a-z][\w-]*(?:=\S*)?", rest)]
            where = f"{doc}:{text.count(chr(10), 0, m.start(1)) + 1}"
            commands.setdefault(argv, []).append((where, flags))
    return commands


def test_documented_commands_are_found():
    commands = documented_commands()
    assert ("train.py",) in commands and ("-m", "highway_env.solver", "store", "verify") in commands
    assert ["--sample"] in [flags for _, flags in commands["-m", "highway_env.solver", "store", "verify"]]


@pytest.mark.slow  # a --help of each of 33 programs: about 20 s on 2 cores
@pytest.mark.parametrize("argv", [pytest.param(a, id=" ".join(a)) for a in documented_commands()])
def test_documented_flags_are_in_the_help(argv):
    run = subprocess.run([sys.executable, *argv, "--help"], cwd=ROOT, env=CHILD_ENV, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0 and "usage" in run.stdout, f"python {' '.join(argv)} --help:\n{run.stderr[-2000:]}"
    unknown = [f"{where}: {flag}" for where, flags in documented_commands()[argv] for flag in flags
               if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", run.stdout)]
    assert not unknown, f"flags that python {' '.join(argv)} --help does not list:\n" + "\n".join(unknown)


def _table_of(doc: Path, heading: str) -> str:
    """The text of ``doc`` from ``heading`` to the next heading of its level."""
    text = doc.read_text()
    start = text.index(f"\n{heading}\n")
    level = heading.split()[0]
    end = text.find(f"\n{level} ", start + len(heading) + 2)
    return text[start:end if end >= 0 else None]


@pytest.mark.parametrize("folder, doc, heading", [("highway_env", "README.md", "## Layout"),
                                                   ("agents", "agents/README.md", "## Modules (one job each)")])
def test_every_module_is_in_its_layout_table(folder, doc, heading):
    """A newcomer looks a module up in the layout tables; ``retrying_pool.py``, ``run_lock.py`` and
    ``agents/interrupts.py`` were in neither. Checks the modules directly in ``folder``."""
    table = _table_of(ROOT / doc, heading)
    missing = [p.name for p in sorted((ROOT / folder).glob("*.py"))
               if p.name != "__init__.py" and not re.search(rf"`(?:{folder}/)?{re.escape(p.name)}`", table)]
    assert not missing, f"{folder}/ module(s) {missing} are not in {doc}'s '{heading[3:]}' table: add a line saying its job"
