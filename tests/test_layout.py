"""The grader's layers (grader/README.md, "Layers"): each imports only the layers below it, and no module of
grader/ imports, however indirectly, itself.

The import graph is read from the source with `ast`: every `import` and `from ... import` of grader/, at module
level and inside functions alike (a function-level import runs as surely as a module-level one, only later);
only those under `if TYPE_CHECKING:` are left out, since they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from grader import ROOT

#: Bottom first. A module may import modules of its own unit and of the layers below its own; units that share a
#: layer are independent of each other. A unit is a package (with all below it) or a tuple of modules; "grader" is
#: the package's __init__ alone (ROOT), which every part uses. The top: the two front ends, the `devcourse`
#: command and the notebook extension, which put the parts below together.
LAYERS = (
    ("grader", "grader.simulated"),
    ("grader.catalog",),
    ("grader.guard",),
    ("grader.engine",),
    ("grader.learner", "grader.checks"),
    ("grader.classroom", "grader.doctor", "grader.authoring"),
    (("grader.cli", "grader.launch", "grader.__main__", "grader.magics"),),
)

GRADER = ROOT / "grader"


def module_name(path: Path, base: Path = ROOT) -> str:
    parts = list(path.relative_to(base).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every import node of `tree`, at any depth, but those under `if TYPE_CHECKING:`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        children = list(ast.iter_child_nodes(node))
        if isinstance(node, ast.If) and _type_checking_only(node):
            children = node.orelse
        stack.extend(children)


def import_graph(root: Path = GRADER) -> dict[str, set[str]]:
    """Module -> the modules of grader/ it imports (a package's __init__ counts as the package)."""
    files = {module_name(p, root.parent): p for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                candidates = [f"{base}.{alias.name}" for alias in node.names] + [base]
                candidates = [c for c in candidates[:-1] if c in files] or [base]
            for candidate in candidates:
                while candidate and candidate not in files:
                    candidate = candidate.rpartition(".")[0]
                if candidate and candidate != name:
                    targets.add(candidate)
        graph[name] = targets
    return graph


def layer_of(module: str) -> tuple[int, str]:
    """(layer index, the unit that places it) of `module`."""
    for index, units in enumerate(LAYERS):
        for unit in units:
            members = unit if isinstance(unit, tuple) else (unit,)
            for member in members:
                if module == member or (member != "grader" and module.startswith(member + ".")):
                    return index, " ".join(members)
    raise LookupError(module)


def _placed(module: str) -> bool:
    try:
        layer_of(module)
    except LookupError:
        return False
    return True


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a path that ends where it starts) per strongly connected part of more than one module."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):  # Tarjan's algorithm, iterative so that a deep graph needs no recursion limit
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    part = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        part.append(w)
                        if w == node:
                            break
                    if len(part) > 1:
                        found.append(_a_cycle(graph, set(part)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _a_cycle(graph, part: set[str]) -> list[str]:
    start = min(part)
    paths = {start: [start]}
    queue = [start]
    while queue:  # breadth first within the part, back to start
        node = queue.pop(0)
        for child in sorted(graph[node] & part):
            if child == start:
                return paths[node] + [start]
            if child not in paths:
                paths[child] = paths[node] + [child]
                queue.append(child)
    return sorted(part)


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_every_module_of_grader_has_a_layer(graph):
    unplaced = [module for module in graph if not _placed(module)]
    assert not unplaced, f"place these in a layer (tests/test_layout.py LAYERS, grader/README.md): {unplaced}"


def test_no_module_of_grader_imports_itself_through_others(graph):
    found = cycles(graph)
    assert not found, "import circles (break each: move what both need below both):\n" + "\n".join(
        " -> ".join(cycle) for cycle in found)


def test_each_layer_imports_only_the_layers_below_it(graph):
    wrong = []
    placed = {module for module in graph if _placed(module)}  # the others: test_every_module_of_grader_has_a_layer
    for module, targets in sorted(graph.items()):
        if module not in placed:
            continue
        level, package = layer_of(module)
        for target in sorted(targets & placed):
            target_level, target_package = layer_of(target)
            if target_package == package or target_level < level or target_package == "grader":
                continue
            how = "up" if target_level > level else "sideways"
            wrong.append(f"{module} -> {target} ({how}: {package} is layer {level}, {target_package} {target_level})")
    assert not wrong, "imports against the layers:\n" + "\n".join(wrong)


def test_the_graph_reader_sees_every_kind_of_import(tmp_path):
    """The reader itself: a module-level, a function-level, a relative and a `from package import module`
    import each make an arrow; one under TYPE_CHECKING makes none."""
    package = tmp_path / "grader"
    (package / "low").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "low" / "__init__.py").write_text("")
    (package / "low" / "a.py").write_text("from . import b\n")
    (package / "low" / "b.py").write_text("def f():\n    import grader.low.c\n")
    (package / "low" / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from grader.low import a\n")
    (package / "top.py").write_text("from grader.low import a\nfrom grader import low\n")
    found = import_graph(package)
    assert found == {"grader": set(), "grader.low": set(), "grader.low.a": {"grader.low.b"},
                     "grader.low.b": {"grader.low.c"}, "grader.low.c": set(), "grader.top": {"grader.low.a", "grader.low"}}
    found["grader.low.c"].add("grader.low.a")
    assert cycles(found) == [["grader.low.a", "grader.low.b", "grader.low.c", "grader.low.a"]]
