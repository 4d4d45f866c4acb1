"""No circles among the console's ES modules (console/js): a module never imports, directly or through
others, a module that imports it. A circle makes the evaluation order decide whether a binding is
ready, and ties the screens to the app that routes to them (they share console/js/router.js instead)."""

import re
from pathlib import Path

from local import ROOT

CONSOLE_JS = ROOT / "console" / "js"
# import x from "./a.js"; import {a, b} from "./a.js"; import * as a from "./a.js"; import "./a.js";
# export {a} from "./a.js"; export * from "./a.js". Comments are removed first; strings in code are
# not parsed, so a specifier is only what follows `from` or a bare `import` at a statement's start.
_STATIC = re.compile(r"""(?:^|;)\s*(?:import|export)\b(?:[^;'"]*?\bfrom)?\s*(["'])([^"']+)\1""", re.MULTILINE)
_DYNAMIC = re.compile(r"""\bimport\s*\(\s*(["'])([^"']+)\1\s*\)""")
_COMMENTS = re.compile(r"/\*.*?\*/|(?<![:\"'])//[^\n]*", re.DOTALL)


def imports_of(module: Path) -> set[Path]:
    """The modules ``module`` imports, statically or with import(), resolved like a browser would."""
    source = _COMMENTS.sub("", module.read_text())
    specifiers = [m[2] for m in _STATIC.finditer(source)] + [m[2] for m in _DYNAMIC.finditer(source)]
    return {(module.parent / s).resolve() for s in specifiers if s.startswith(".")}


def cycles(folder: Path) -> list[list[str]]:
    """Every circle among the modules of ``folder``, each as the names along it, first name repeated
    at the end (``["app.js", "org.js", "app.js"]``); each circle once, from its smallest name."""
    graph = {path.resolve(): imports_of(path) for path in sorted(folder.rglob("*.js"))}
    found: set[tuple[str, ...]] = set()

    def walk(path: Path, trail: list[Path]) -> None:
        for target in sorted(graph.get(path, ())):
            if target in trail:
                loop = [p.relative_to(folder.resolve()).as_posix() for p in trail[trail.index(target) :]]
                start = loop.index(min(loop))
                found.add(tuple(loop[start:] + loop[:start]))
            elif target in graph:
                walk(target, [*trail, target])

    for module in graph:
        walk(module, [module])
    return [[*loop, loop[0]] for loop in sorted(found)]


def test_the_console_modules_import_each_other_in_no_circle():
    assert CONSOLE_JS.is_dir() and imports_of(CONSOLE_JS / "app.js")  # the graph is really read
    circles = [" -> ".join(loop) for loop in cycles(CONSOLE_JS)]

    assert not circles, f"console/js modules import each other in a circle: {'; '.join(circles)}"


def test_a_circle_through_a_third_module_is_found_and_named(tmp_path):
    # Given app.js -> screen.js -> helpers.js -> app.js, in the forms the console writes imports
    (tmp_path / "app.js").write_text('import { screen } from "./screen.js";\nimport "./style.js";\n')
    (tmp_path / "screen.js").write_text(
        '// import { nothing } from "./app.js";  (a comment: no edge)\nimport {\n  help,\n} from "./helpers.js";\n'
    )
    (tmp_path / "helpers.js").write_text('export const help = 1; export { go } from "./app.js";\n')
    (tmp_path / "style.js").write_text("export const style = 1;\n")

    assert cycles(tmp_path) == [["app.js", "screen.js", "helpers.js", "app.js"]]


def test_two_modules_that_import_each_other_are_a_circle(tmp_path):
    (tmp_path / "app.js").write_text('import * as org from "./org.js";')
    (tmp_path / "org.js").write_text("const later = () => import('./app.js');")

    assert cycles(tmp_path) == [["app.js", "org.js", "app.js"]]
