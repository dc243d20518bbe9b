"""The oldest Python that pyproject's ``requires-python`` names can run the package and the two
commands: vermin reads every module for syntax and standard-library names newer than it (the
suite itself runs on one Python only)."""

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from optional_parts import require_modules

ROOT = Path(__file__).resolve().parent.parent
CODE = ["highway_env", "agents", "train.py", "evaluate.py"]


def oldest_python() -> str:
    spec = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    match = re.fullmatch(r">=\s*(3\.\d+)", spec)
    assert match, f"requires-python {spec!r} is not of the form '>=3.N'"
    return match.group(1)


def vermin(target: str) -> subprocess.CompletedProcess:
    require_modules("Python-version", "vermin", ("vermin",), 'pip install -e ".[test]"')
    args = ["vermin", "--no-tips", "--violations", "-q", f"-t={target}-", *CODE]
    run_vermin = f"import sys, vermin; sys.argv = {args!r}; sys.exit(vermin.main())"  # it has no __main__
    return subprocess.run([sys.executable, "-c", run_vermin], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_the_code_needs_no_python_newer_than_requires_python():
    out = vermin(oldest_python())
    assert out.returncode == 0 and not out.stdout.strip(), (
        f"code that needs a Python newer than requires-python >={oldest_python()}:\n{out.stdout}{out.stderr}")


def test_the_check_sees_what_an_older_python_lacks():
    # one minor version older must fail, else the check above is blind (dataclass(slots=...) is 3.10)
    major, minor = oldest_python().split(".")
    out = vermin(f"{major}.{int(minor) - 1}")
    assert out.returncode != 0 and "requires" in out.stdout, out.stdout + out.stderr


#: standard-library modules that Python 3.12 (distutils, imp, asynchat, asyncore, smtpd) and 3.13 (PEP 594's
#: dead batteries, lib2to3) removed
REMOVED = {"distutils", "imp", "asynchat", "asyncore", "smtpd", "aifc", "audioop", "cgi", "cgitb", "chunk", "crypt",
           "imghdr", "mailcap", "msilib", "nis", "nntplib", "ossaudiodev", "pipes", "sndhdr", "spwd", "sunau",
           "telnetlib", "uu", "xdrlib", "lib2to3"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):  # function-local imports too
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_no_module_imports_what_newer_pythons_removed():
    files = [p for entry in CODE for p in ([ROOT / entry] if entry.endswith(".py") else (ROOT / entry).rglob("*.py"))]
    assert len(files) > 100
    found = {str(p.relative_to(ROOT)): sorted(imported_modules(p) & REMOVED) for p in files}
    assert not {f: m for f, m in found.items() if m}


def test_imported_modules_reads_local_and_dotted_imports(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import os.path\ndef f():\n    from distutils import util\n    import imp\nfrom . import x\n")
    assert imported_modules(source) == {"os", "distutils", "imp"}
