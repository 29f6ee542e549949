"""benchmarks/import_circles.py finds circles of modules (function-level imports included) and
nothing else; squashed, a circle through subpackages or packages shows even when no two files import each other."""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def circles(monkeypatch, tmp_path):
    spec = importlib.util.spec_from_file_location("import_circles", ROOT / "benchmarks" / "import_circles.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.syspath_prepend(str(tmp_path))
    return module.circles


def _package(root: Path, name: str, files: dict[str, str]) -> None:
    for path, text in {"__init__.py": "", **files}.items():
        target = root / name / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    sys.modules.pop(name, None)


def test_a_circle_through_a_function_body_is_found(circles, tmp_path):
    _package(tmp_path, "circled", {"a.py": "from . import b\n", "b.py": "def f():\n    from . import a\n",
                                   "c.py": "from . import a\n"})
    assert circles(("circled",)) == [["circled.a", "circled.b"]]


def test_one_way_imports_have_no_circle(circles, tmp_path):
    _package(tmp_path, "layered", {"a.py": "from . import b\n", "b.py": "from . import c\n", "c.py": ""})
    assert circles(("layered",)) == []


def test_squashing_shows_a_circle_between_subpackages(circles, tmp_path):
    _package(tmp_path, "nested", {"x/__init__.py": "", "x/one.py": "from ..y import two\n",
                                  "y/__init__.py": "", "y/two.py": "", "y/three.py": "from ..x import one\n"})
    assert circles(("nested",)) == []
    assert circles(("nested",), level="subpackages") == [["nested.x", "nested.y"]]


def test_squashing_packages_shows_a_circle_between_packages(circles, tmp_path):
    _package(tmp_path, "upper", {"facade.py": "import lower.core\n"})
    _package(tmp_path, "lower", {"core.py": "", "helper.py": "def f():\n    import upper\n"})
    assert circles(("upper", "lower")) == []
    assert circles(("upper", "lower"), level="packages") == [["lower", "upper"]]
