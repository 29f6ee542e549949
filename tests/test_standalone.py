"""The repository stands alone: nothing reads a folder beside the checkout, and the data files the
package reads at run time are declared as package data, so an installed wheel has them too."""

import re
import subprocess
import tomllib
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# A path out of the checkout into the sibling folder, in code (a parents[n] path joined with the name) or text.
OUTSIDE = re.compile(r"\.\./shared\b|/ \"shared\"|\bshared/(spec|seeds|DESIGN)")


def _tracked(*patterns: str) -> list[Path]:
    names = subprocess.run(["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    return [ROOT / n for n in names]


def test_no_file_points_outside_the_repository():
    offenders = [str(p.relative_to(ROOT)) for p in _tracked("*.py", "*.md", "*.toml", "*.cfg", "*.txt", ".ci/*")
                 if p.is_file() and OUTSIDE.search(p.read_text(encoding="utf-8", errors="replace"))]
    assert offenders == []


def test_perf_measurements_are_package_data():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    package = ROOT / "buda_runtime_sim"
    files = [p.relative_to(package).as_posix() for p in (package / "perf" / "perf_data").rglob("*") if p.is_file()]
    assert len(files) >= 70                                  # 65 sweeps, 4 params files, summary, README, LICENSE
    missing = [f for f in files if not any(fnmatch(f, g) for g in globs["buda_runtime_sim"])]
    assert missing == []
