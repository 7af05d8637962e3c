"""The package layout's rules, read from the source (no import runs): no import cycle between the
project's modules at module level, and the torch side never imports Beam or the Beam jobs."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("corpora", "pipelines", "training")


def module_files() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            parts = path.relative_to(REPO).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported_names(name: str, path: Path, nodes) -> set[str]:
    """Absolute names of what the import statements among `nodes` (of module `name`) import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def module_level_imports(name: str, path: Path) -> set[str]:
    """Absolute names of what a module imports at module level (imports inside functions are lazy)."""
    return imported_names(name, path, ast.parse(path.read_text(encoding="utf-8")).body)


def import_graph() -> dict[str, set[str]]:
    files = module_files()
    return {name: {d for d in module_level_imports(name, path) if d in files and d != name}
            for name, path in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return stack[stack.index(dep):] + [dep]
            if not state.get(dep) and (cycle := visit(dep)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if not state.get(node) and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_cycle_at_module_level():
    graph = import_graph()
    assert len(graph) > 40  # every module was read
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def package_of(module: str) -> str:
    """corpora's sub-package a module belongs to (corpora.wikitext.templates counts as corpora.wikitext.parse);
    a job or training module belongs to its top-level package."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "corpora" and len(parts) > 2 else parts[0]


def test_corpora_sub_packages_form_layers():
    """corpora/ is cut by domain (dumps, wiki, wikitext, mrc, clism, xy) over shared helpers at its top:
    no two sub-packages import each other, directly or around a circle, and the shared helpers import
    no sub-package."""
    graph: dict[str, set[str]] = {}
    for module, deps in import_graph().items():
        graph.setdefault(package_of(module), set()).update(package_of(d) for d in deps if package_of(d) != package_of(module))
    for deps in list(graph.values()):
        for dep in deps:
            graph.setdefault(dep, set())
    assert {"corpora.dumps", "corpora.wiki", "corpora.wikitext", "corpora.mrc", "corpora.clism", "corpora.xy"} <= set(graph)
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))
    assert not {d for d in graph["corpora"] if d.startswith("corpora.")}, graph["corpora"]
    top_level = sorted(p.stem for p in (REPO / "corpora").glob("*.py") if p.stem != "__init__")
    assert len(top_level) <= 13, f"corpora/ keeps only shared helpers at its top: {top_level}"


def test_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_training_never_imports_beam_or_the_jobs():
    files = module_files()
    for name, path in files.items():
        if name.startswith("training"):
            imported = module_level_imports(name, path)
            assert not any(i.startswith(("apache_beam", "pipelines")) for i in imported), (name, imported)


def test_every_model_has_its_model_data_and_recipe_module():
    """docs/training.md, "Adding a model": the same three files for every model."""
    from training.registry import MODEL_NAMES

    files = module_files()
    for name in MODEL_NAMES:
        for kind in ("models", "data", "recipes"):
            assert f"training.{kind}.{name}" in files, f"training/{kind}/{name}.py missing"
        assert "SPEC" in (REPO / "training" / "recipes" / f"{name}.py").read_text(encoding="utf-8")


def test_model_files_import_nothing_of_the_training_plumbing():
    """A model file is pure modeling, safe to save beside weights (XY-LENT's is, as remote code): at
    module level it imports only torch, transformers and its sibling blocks."""
    files = module_files()
    for name, path in files.items():
        if name.startswith("training.models."):
            ours = {i for i in module_level_imports(name, path) if i.split(".")[0] in PACKAGES}
            assert all(i.startswith("training.models") for i in ours), (name, ours)


def test_training_modules_import_in_isolation():
    """Each training module imported first, in a fresh interpreter's view of the project's packages: an
    import cycle through a lazy import or a missing import shows here, whatever order tests import in."""
    import subprocess
    import sys

    names = sorted(n for n in module_files() if n.startswith("training"))
    script = (
        "import importlib, sys\n"
        "failed = []\n"
        f"for name in {names!r}:\n"
        "    for loaded in [m for m in sys.modules if m.split('.')[0] in ('training', 'corpora', 'pipelines')]:\n"
        "        del sys.modules[loaded]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as e:\n"
        "        failed.append(f'{name}: {type(e).__name__}: {e}')\n"
        "print('\\n'.join(failed))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == ""


def all_imports(name: str, path: Path) -> set[str]:
    """What a module imports anywhere, lazy imports inside functions included."""
    return imported_names(name, path, ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


def test_no_import_cycle_in_training_even_through_lazy_imports():
    # A lazy import only hides a circle (the fine-tuning loop once reached the pre-training loop for an
    # exception class, and the pre-training loop the fine-tuning command for its flags).
    files = {name: path for name, path in module_files().items() if name.startswith("training")}
    graph = {name: {d for d in all_imports(name, path) if d in files and d != name} for name, path in files.items()}
    assert len(graph) > 30
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))
