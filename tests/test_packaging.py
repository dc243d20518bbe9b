"""What ``pip install`` of the wheel carries: every data file the runtime reads lies inside a package
and matches ``[tool.setuptools.package-data]``, and no module finds its files by climbing out of its
package (a wheel has no ``proof/`` or ``results/`` beside it). The slow test builds the wheel,
installs it into a fresh environment and runs tests/wheel_smoke.py from outside the checkout."""

import ast
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PACKAGES = ("highway_env", "agents")
#: Modules that build a path above their package on purpose, and why that is not a data read.
CLIMB_ALLOWED = {
    "highway_env/shipped.py": "the checkout's shipped folders, only compared with a path to write",
    "highway_env/play/opponents.py": "the folder holding the package, put on a child process's PYTHONPATH",
    "highway_env/evaluation/provenance.py": "the checkout holding the package, asked for its git commit "
                                            "(none for an installed copy)",
}


def tracked_files(package: str) -> list[str]:
    """The package's files relative to ROOT: those git tracks, else (an sdist) those on disk."""
    try:
        out = subprocess.run(["git", "ls-files", package], cwd=ROOT, capture_output=True, text=True, check=True)
        files = out.stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        files = []
    if not files:
        files = [p.relative_to(ROOT).as_posix() for p in (ROOT / package).rglob("*")
                 if p.is_file() and "__pycache__" not in p.parts]
    return files


def package_data_matches(package: str) -> set[str]:
    """The files the package-data globs select, relative to ROOT (as setuptools expands them)."""
    base = ROOT / package
    return {Path(p).relative_to(ROOT).as_posix()
            for pattern in PYPROJECT["tool"]["setuptools"]["package-data"].get(package, [])
            for p in glob.glob(str(base / pattern), recursive=True) if os.path.isfile(p)}


@pytest.mark.parametrize("package", PACKAGES)
def test_package_data_globs_cover_every_data_file(package):
    data = {f for f in tracked_files(package) if not f.endswith(".py")}
    assert data, f"no data files found under {package}/"
    assert data <= package_data_matches(package), \
        f"not matched by [tool.setuptools.package-data] {package}: {sorted(data - package_data_matches(package))}"


@pytest.mark.parametrize("package", PACKAGES)
def test_every_folder_of_modules_is_a_package(package):
    # setuptools' find collects folders with an __init__.py only: a folder of modules without one
    # would work from the checkout and be missing from the wheel
    folders = {Path(f).parent for f in tracked_files(package) if f.endswith(".py")}
    assert [str(d) for d in sorted(folders) if not (ROOT / d / "__init__.py").is_file()] == []


def test_the_runtime_data_paths_are_package_data():
    import agents
    from highway_env.evaluation.position_set import DEFAULT_PATH, V2_PATH
    from highway_env.rushhour.game import CARDS_FILE
    from highway_env.solver.opening_book import DEFAULT_BOOK_PATH

    needed = [DEFAULT_PATH, V2_PATH, DEFAULT_BOOK_PATH, ROOT / "highway_env" / "data" / CARDS_FILE,
              *(ROOT / "highway_env" / "play" / "static" / n for n in ("index.html", "app.js", "style.css")),
              *agents.ZOO.values()]
    shipped = package_data_matches("highway_env") | package_data_matches("agents")
    for path in needed:
        rel = Path(path).resolve().relative_to(ROOT).as_posix()
        assert rel in shipped, f"{rel} is read at run time but not in the wheel's package data"


def test_one_version_everywhere():
    # pyproject (the index), the package (highway_env.__version__) and CITATION.cff (what papers cite)
    import highway_env

    cited = re.search(r"^version: *\"?([^\"\n]+)", (ROOT / "CITATION.cff").read_text(), re.M).group(1).strip()
    assert PYPROJECT["project"]["version"] == highway_env.__version__ == cited


# ----------------------------------------------------------------------------- climbing out of a package

def _climbs(node: ast.AST, owner: str) -> tuple[str, int] | None:
    """(file the path starts from, folders climbed) for an expression built from a ``__file__`` through
    Path(), resolve(), .parent, .parents[k], os.path.dirname/abspath/join and '..' parts; else None."""
    if isinstance(node, ast.Name) and node.id == "__file__":
        return owner, 0
    if isinstance(node, ast.Attribute) and node.attr == "__file__":  # pkg.__file__: its __init__.py
        name = ast.unparse(node.value)
        return (name.replace(".", "/") + "/__init__.py", 0) if name.split(".")[0] in PACKAGES else None
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _climbs(node.value, owner)
        return inner and (inner[0], inner[1] + 1)
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents"
            and isinstance(node.slice, ast.Constant)):
        inner = _climbs(node.value.value, owner)
        return inner and (inner[0], inner[1] + node.slice.value + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        inner = _climbs(node.left, owner)
        ups = isinstance(node.right, ast.Constant) and str(node.right.value).split("/").count("..")
        return inner and (inner[0], inner[1] + ups)
    if isinstance(node, ast.Call) and node.args:
        func = ast.unparse(node.func).split(".")[-1]
        if func in ("Path", "PurePath", "resolve", "absolute", "abspath", "realpath", "normpath", "dirname", "join"):
            inner = _climbs(node.args[0], owner)
            ups = (func == "dirname") + sum(isinstance(a, ast.Constant) and str(a.value).split("/").count("..")
                                            for a in node.args[1:])
            return inner and (inner[0], inner[1] + ups)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("resolve", "absolute"):
        return _climbs(node.func.value, owner)
    return None


def escapes(source: str, owner: str) -> list[str]:
    """The expressions of ``source`` (the module at ``owner``, relative to ROOT) whose path leaves the
    top-level package folder the path starts in."""
    out = []
    for node in ast.walk(ast.parse(source)):
        found = _climbs(node, owner)
        if found and found[1] > len(Path(found[0]).parts) - 1:  # climbing past the top-level folder
            out.append(ast.unparse(node))
    return out


def test_escapes_sees_a_climb_out_of_the_package():
    assert escapes("ROOT = Path(__file__).resolve().parent.parent", "highway_env/shipped.py")
    assert escapes("R = os.path.join(os.path.dirname(__file__), '..', 'proof')", "highway_env/x.py")
    assert escapes("r = Path(highway_env.__file__).parents[1]", "highway_env/play/x.py")
    assert not escapes("D = Path(__file__).resolve().parent.parent / 'data'", "highway_env/solver/x.py")
    assert not escapes("P = Path(__file__).parent / 'pretrained'", "agents/__init__.py")


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_climbs_out_of_its_package(package):
    found = {f: e for f in tracked_files(package) if f.endswith(".py") and f not in CLIMB_ALLOWED
             for e in [escapes((ROOT / f).read_text(), f)] if e}
    assert found == {}, "these read outside the package, which a wheel does not carry: move the data into " \
                        "the package (and package-data) or take the path as an argument"


def test_the_allowed_climbs_are_still_there():
    # an entry left after its code moved would let a real climb through unnoticed
    for f in CLIMB_ALLOWED:
        assert escapes((ROOT / f).read_text(), f), f"{f} no longer climbs: remove it from CLIMB_ALLOWED"


def test_a_command_run_away_from_the_checkout_root_says_what_it_leaves_out(capsys, tmp_path, monkeypatch):
    # first-moves reads proof/certificate.json relative to the current directory, which an installed
    # package (or a run from another folder) does not have: it must say so, not just run longer
    import highway_env.solver.prove as prove_module
    from highway_env.solver.__main__ import main

    seen = {}
    monkeypatch.setattr(prove_module, "first_move_values",
                        lambda config, out, progress, certificate: seen.update(certificate=certificate)
                        or {"moves": [], "complete": False})
    monkeypatch.chdir(tmp_path)
    assert main(["first-moves", "--out", str(tmp_path / "f.json"), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert seen == {"certificate": None}
    assert "'proof/certificate.json' not found" in err and "checkout's root" in err
    monkeypatch.chdir(ROOT)  # from the root the shipped certificate is found and used, without a note
    assert main(["first-moves", "--out", str(tmp_path / "f.json"), "--no-progress"]) == 0
    assert "not found" not in capsys.readouterr().err and seen["certificate"]["first_move"]


# ----------------------------------------------------------------------------- the wheel itself

@pytest.mark.slow
def test_wheel_installs_and_runs_outside_the_checkout(tmp_path):
    pytest.importorskip("setuptools", minversion="77", reason="the build backend pyproject.toml asks for")
    # a copy of the working tree (tracked and new files), so the build leaves nothing in the checkout
    src = tmp_path / "src"
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.splitlines()
    for f in listed:
        if (ROOT / f).is_file():
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, src / f)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path / "whl"), str(src)], check=True, timeout=600)
    wheel, = (tmp_path / "whl").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f for p in PACKAGES for f in tracked_files(p) if "__pycache__" not in f}
    assert expected <= names, f"missing from the wheel: {sorted(expected - names)}"
    assert not {n for n in names if n.split("/")[0] in ("proof", "results", "tests", "bench", "examples")}

    # the system's packages give the dependencies, as plain sys.path entries: with --system-site-packages
    # the system's .pth files would run too, and an editable install's (a developer's `pip install -e .`,
    # as the README says) puts a finder of the checkout in front of the wheel's copy
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    venv_site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip()
    system = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (Path(venv_site) / "system_packages.pth").write_text("".join(f"{p}\n" for p in system))
    # --ignore-installed: the system's copy (seen through the .pth) is not 'already satisfied', nor removed
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--ignore-installed",
                    str(wheel)],
                   check=True, timeout=600)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    r = subprocess.run([str(python), str(ROOT / "tests" / "wheel_smoke.py"), site], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "wheel smoke: all good" in r.stdout


def test_the_gymnasium_lower_bound_has_the_vector_api_the_envs_import():
    """highway_env.gym_vector_env imports gymnasium.vector.AutoresetMode, which Gymnasium 1.1.0 added:
    a lower bound of 1.0 let pip keep an install on which make_vec of our id cannot import the env."""
    (bound,) = [d for d in PYPROJECT["project"]["dependencies"] if d.startswith("gymnasium")]
    lowest = tuple(int(x) for x in re.fullmatch(r"gymnasium>=([\d.]+)", bound).group(1).split("."))
    assert lowest >= (1, 1), bound

