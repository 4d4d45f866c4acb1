"""The import graph of our Python, read with ``ast`` (nothing is imported): every arrow points down
(handlers -> http -> logic -> dal -> models), and no module reaches itself through its imports."""

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Where our modules live, and the folder each one's dotted name starts from.
PACKAGES = {"functions": ROOT / "functions", **{name: ROOT for name in ("local", "cpctl", "infra", "ops", "bench")}}
CP = "controlplane"
# (the layer, the layers it may never import): "Imports go down only" (issue 28).
FORBIDDEN = {
    f"{CP}.logic": {f"{CP}.http"},
    f"{CP}.dal": {f"{CP}.http", f"{CP}.logic"},
    f"{CP}.models": {f"{CP}.http", f"{CP}.logic", f"{CP}.dal", f"{CP}.lifecycle", "boto3", "botocore"},
    f"{CP}.lifecycle": {f"{CP}.http"},
}


def _modules() -> dict[str, Path]:
    found = {}
    for package, base in PACKAGES.items():
        folder = ROOT / package if package != "functions" else base
        for path in sorted(folder.rglob("*.py")):
            if ".venv" in path.parts or "node_modules" in path.parts:
                continue
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _under_type_checking(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def imports_of(module: str, source: str, *, typing_only: bool = False) -> Iterator[str]:
    """The modules ``module`` imports, as dotted names: ``from a import b`` names ``a.b`` when that is
    a module of ours, else ``a``. Imports under ``if TYPE_CHECKING`` are left out unless asked."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    package = module if MODULES.get(module, Path()).name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if _under_type_checking(node, parents) and not typing_only:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, base] if base else anchor)
        for alias in node.names:
            yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base


def graph() -> dict[str, set[str]]:
    """Each module of ours -> the modules of ours (or the outside packages) it imports."""
    return {module: set(imports_of(module, path.read_text())) for module, path in MODULES.items()}


def layer_violations(edges: dict[str, set[str]]) -> list[str]:
    found = []
    for module, targets in sorted(edges.items()):
        for layer, forbidden in FORBIDDEN.items():
            if module == layer or module.startswith(f"{layer}."):
                found += [
                    f"{MODULES[module].relative_to(ROOT)} -> {target}"
                    for target in sorted(targets)
                    if any(target == f or target.startswith(f"{f}.") for f in forbidden)
                ]
    return found


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (or a module importing itself), each
    as one circle through it (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if target not in edges:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in edges.get(node, ()):
                found.append(_circle(sorted(group), edges))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _circle(group: list[str], edges: dict[str, set[str]]) -> list[str]:
    """A path from the group's first module back to itself, inside the group (breadth first)."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(edges[node] & members):
                if target == start:
                    return [*paths[node], start]
                if target not in paths:
                    paths[target] = [*paths[node], target]
                    following.append(target)
        frontier = following
    return group


def test_every_arrow_points_down():
    assert layer_violations(graph()) == [], "imports that point up (file -> module)"


def test_no_module_reaches_itself_through_its_imports():
    assert [" -> ".join(circle) for circle in cycles(graph())] == []


def test_the_graph_is_read_from_the_code():
    # The walk finds the imports it must judge: a lazy import inside a function too
    edges = graph()
    assert f"{CP}.http.routes" in edges[f"{CP}.http.resolver"]
    assert f"{CP}.http.idempotency" in edges[f"{CP}.http.resolver"]  # imported inside create_once


@pytest.mark.parametrize(
    ("module", "source", "offence"),
    [
        (f"{CP}.logic.users", "from controlplane.http.auth import Caller", "-> controlplane.http.auth"),
        (f"{CP}.dal.table", "def f():\n    from controlplane.logic import users", "-> controlplane.logic.users"),
        (f"{CP}.models.errors", "from botocore.exceptions import ClientError", "-> botocore.exceptions"),
        (f"{CP}.lifecycle.contract", "import controlplane.http.routes", "-> controlplane.http.routes"),
    ],
    ids=["logic-http", "dal-logic-lazily", "models-botocore", "lifecycle-http"],
)
def test_an_arrow_pointing_up_is_named_with_its_file(module, source, offence):
    edges = graph() | {module: set(imports_of(module, source))}

    [violation] = layer_violations(edges)

    assert violation == f"{MODULES[module].relative_to(ROOT)} {offence}"


def test_a_circle_is_found_and_named():
    edges = graph() | {"local.seed": {"local.tokens"}, "local.tokens": {"local.apigw", "local.seed"}}

    assert "local.seed -> local.tokens -> local.seed" in [" -> ".join(circle) for circle in cycles(edges)]
