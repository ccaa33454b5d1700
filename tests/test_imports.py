"""The tools' imports flow one way: no circle, and no project import hidden inside a function.

A project import is one of tools' own modules or a helper at the repository root (`_reader.py`,
`_cure.py`, …). Only third-party modules may be imported lazily (torch, onnxruntime, Playwright: heavy,
or absent from the torch-free venv that `make check` can run in).
"""
import ast
from pathlib import Path

import pytest

from tools.core.notebooks import REPO_ROOT

# The packages in import order: a module may import from its own package and from those before it.
LAYERS = ("core", "numbers", "author", "run", "measure", "live", "check", "site")


def module_name(path, root):
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules(root):
    """{module name: path} for tools/ and the helpers at the repository root."""
    found = {module_name(path, root): path for path in (root / "tools").rglob("*.py")}
    found.update({path.stem: path for path in root.glob("_*.py")})
    return found


def imported_names(node, importer):
    """The absolute module names an import statement names (its `from` module and, for packages, its names)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = importer.split(".")[: -node.level]
        base = ".".join(package + ([base] if base else []))
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


def project_imports(path, name, modules):
    """[(imported module, line, inside a function?)] for each project import in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for target in imported_names(child, name):
                    if target in modules and target != name:
                        found.append((target, child.lineno, in_function))
            visit(child, nested)

    visit(tree, False)
    return found


def import_graph(root):
    modules = project_modules(root)
    return modules, {name: project_imports(path, name, modules) for name, path in modules.items()}


def circles(graph):
    """Every import circle, each as the list of modules around it (found by depth-first search)."""
    edges = {name: sorted({target for target, _, _ in imports}) for name, imports in graph.items()}
    found, state, stack = [], {}, []

    def walk(name):
        state[name] = "open"
        stack.append(name)
        for target in edges.get(name, []):
            if state.get(target) == "open":
                found.append(stack[stack.index(target):] + [target])
            elif target not in state:
                walk(target)
        stack.pop()
        state[name] = "done"

    for name in sorted(edges):
        if name not in state:
            walk(name)
    return found


def lazy_project_imports(graph):
    return [f"{name} imports {target} inside a function (line {line})"
            for name, imports in sorted(graph.items()) for target, line, lazy in imports if lazy]


def layer_of(name):
    parts = name.split(".")
    return LAYERS.index(parts[1]) if name.startswith("tools.") and len(parts) > 2 and parts[1] in LAYERS else None


def upward_imports(graph):
    """Imports from a later package into an earlier one: the order LAYERS gives is one way."""
    wrong = []
    for name, imports in sorted(graph.items()):
        here = layer_of(name)
        for target, line, _ in imports:
            there = layer_of(target)
            if here is not None and there is not None and there > here:
                wrong.append(f"{name} (tools.{LAYERS[here]}) imports {target} (tools.{LAYERS[there]}), line {line}")
    return wrong


def test_the_tools_have_no_import_circle():
    _, graph = import_graph(REPO_ROOT)
    assert circles(graph) == [], "import circles: " + "; ".join(" -> ".join(c) for c in circles(graph))


def test_no_project_import_is_hidden_inside_a_function():
    _, graph = import_graph(REPO_ROOT)
    assert lazy_project_imports(graph) == []


def test_the_packages_import_one_way():
    _, graph = import_graph(REPO_ROOT)
    assert upward_imports(graph) == []


def test_every_tool_lives_in_a_package_of_the_order():
    loose = sorted(p.name for p in (REPO_ROOT / "tools").glob("*.py") if p.name != "__init__.py")
    packages = sorted(p.name for p in (REPO_ROOT / "tools").iterdir() if (p / "__init__.py").exists())
    assert loose == [] and packages == sorted(LAYERS)


@pytest.fixture
def tiny_project(tmp_path):
    def write(files):
        for relative, text in files.items():
            path = tmp_path / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        for package in {p.parent for p in tmp_path.rglob("*.py")} - {tmp_path}:
            (package / "__init__.py").touch()
        return import_graph(tmp_path)[1]
    return write


def test_the_walk_finds_a_circle_and_a_hidden_import(tiny_project):
    graph = tiny_project({
        "tools/core/a.py": "from tools.live import b\n",
        "tools/live/b.py": "def f():\n    from tools.core.a import x\n",
        "_helper.py": "import torch\n",
    })
    assert circles(graph) == [["tools.core.a", "tools.live.b", "tools.core.a"]]
    assert lazy_project_imports(graph) == ["tools.live.b imports tools.core.a inside a function (line 2)"]
    assert upward_imports(graph) == ["tools.core.a (tools.core) imports tools.live.b (tools.live), line 1"]


def test_the_walk_lets_third_party_imports_be_lazy(tiny_project):
    graph = tiny_project({
        "tools/live/b.py": "import _helper\ndef f():\n    import torch\n",
        "_helper.py": "import numpy\n",
    })
    assert circles(graph) == [] and lazy_project_imports(graph) == [] and upward_imports(graph) == []
