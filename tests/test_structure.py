"""The shape of robot/: layers, no import cycles, no oversized modules.

The import graph is read from the source with the standard library's ast
module, so it sees what a run can import, not only what one test imported:
every `import` / `from ... import` anywhere in a module (also inside
functions), and every string that names a robot module, such as the
"robot.x.commands" and "robot.x.doctor_checks:check" registries that cli.py
and the doctor import with importlib.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "robot"
MAX_LINES = 600
# "robot.link.commands" or "robot.link.doctor_checks:check_serial"
MODULE_STRING = re.compile(r"(robot(?:\.\w+)+)(?::\w+)?")

# The layers of robot/, lowest first (docs/developing.md draws the same table).  A package is a
# folder of robot/ or a module beside them; "robot" is robot/__init__.py.  A package imports only
# packages of its own layer or of lower ones (its commands.py and doctor_checks.py included: the
# registries that list those are in the top layer), and no two packages import each other, even
# through others.
LAYERS = [
    ("model", {"robot", "cube", "plan", "plan3", "motion", "regrip", "config", "config_schema", "config_types",
               "config_edit", "scan_sequence", "scan_sequence3", "firmware_header", "puzzles", "checks", "errors",
               "tables_store", "paths", "exit_status", "progress", "cli_common"}),
    ("devices", {"link", "arms", "vision", "solver", "solver3"}),
    ("the virtual robot", {"sim"}),
    ("applications", {"run", "bringup", "calibrate", "doctor", "panel", "cli", "__main__"}),
]


def module_files() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute name of a relative import in `module`."""
    if level == 0:
        return name or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def imports_of(module: str, path: Path, known: set[str]) -> set[str]:
    """The robot modules `module` imports (statically, in functions, or by a module-name string)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    targets = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node.level, node.module)
            targets.add(base)
            # `from package import module` imports that module too.
            targets.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = MODULE_STRING.fullmatch(node.value)
            if match and match.group(1) in known:
                targets.add(match.group(1))
    edges = set()
    own_ancestors = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
    for target in targets:
        if target not in known:
            continue
        edges.add(target)
        # Importing a.b.c runs a/b/__init__.py first (unless it is one of our own packages,
        # which are already being imported when this module runs).
        parts = target.split(".")
        for i in range(2, len(parts)):
            ancestor = ".".join(parts[:i])
            if ancestor in known and ancestor not in own_ancestors:
                edges.add(ancestor)
    edges.discard(module)
    return edges


def import_graph() -> dict[str, set[str]]:
    files = module_files()
    known = set(files)
    return {module: imports_of(module, path, known) for module, path in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None."""
    state = {}  # module -> "open" while on the DFS stack, "done" after
    stack = []

    def visit(module):
        state[module] = "open"
        stack.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        stack.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            if cycle:
                return cycle
    return None


def test_the_graph_sees_function_level_and_registry_imports():
    """The reader itself: it must find the imports this test exists to police."""
    graph = import_graph()
    assert "robot.vision.scan" in graph["robot.run.pipeline"]  # inside a method
    assert "robot.run.commands" in graph["robot.cli"]  # a COMMAND_MODULES string
    assert "robot.link.doctor_checks" in graph["robot.doctor.preflight"]  # a PREFLIGHT_CHECKS "module:function" string
    assert "robot.checks" in graph["robot.link.doctor_checks"]  # `from ..checks import ...`
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def all_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Cycles until none is left, each found after cutting the closing edge of the one before."""
    graph = {module: set(targets) for module, targets in graph.items()}
    cycles = []
    while (cycle := find_cycle(graph)) is not None:
        cycles.append(cycle)
        graph[cycle[-2]].discard(cycle[-1])
    return cycles


def package_of(module: str) -> str:
    """robot.link.driver -> link; robot.cube -> cube; robot -> robot."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def package_edges(graph: dict[str, set[str]]) -> dict[tuple[str, str], list[str]]:
    """(package, imported package) -> the module imports that make the edge."""
    edges: dict[tuple[str, str], list[str]] = {}
    for module, targets in graph.items():
        for target in sorted(targets):
            if package_of(module) != package_of(target):
                edges.setdefault((package_of(module), package_of(target)), []).append(f"{module} -> {target}")
    return edges


def layer_of(package: str) -> int | None:
    return next((i for i, (_, packages) in enumerate(LAYERS) if package in packages), None)


def layer_violations(edges: dict[tuple[str, str], list[str]]) -> list[str]:
    """The module imports by which a package reaches a higher layer."""
    return [f"{why} ({LAYERS[layer_of(a)][0]} imports {LAYERS[layer_of(b)][0]})"
            for (a, b), whys in sorted(edges.items()) if layer_of(b) > layer_of(a) for why in whys]


def test_the_package_graph_and_layer_rule_catch_what_they_police():
    assert package_of("robot.link.driver") == "link" and package_of("robot.cube") == "cube"
    made_up = {"robot.link.driver": {"robot.run.pipeline", "robot.cube"}, "robot.run.pipeline": {"robot.link"},
               "robot.cube": set(), "robot.link": set()}
    edges = package_edges(made_up)
    assert edges[("link", "run")] == ["robot.link.driver -> robot.run.pipeline"]
    assert layer_violations(edges) == ["robot.link.driver -> robot.run.pipeline (devices imports applications)"]
    assert find_cycle({a: {b for (x, b) in edges if x == a} for (a, _) in edges}) == ["link", "run", "link"]


def test_every_package_has_a_layer():
    packages = {package_of(module) for module in module_files()}
    unplaced = sorted(p for p in packages if layer_of(p) is None)
    assert not unplaced, f"packages in no layer of LAYERS (add them to the table and to docs/developing.md): {unplaced}"


def test_docs_draw_the_same_layers():
    """docs/developing.md's table of layers (top down) names the packages of LAYERS, layer by layer."""
    text = (ROOT / "docs" / "developing.md").read_text()
    table = text.split("| layer | packages |\n| --- | --- |\n", 1)[1].split("\n\n", 1)[0]
    rows = [line.strip("| ").split(" | ", 1) for line in table.splitlines()]
    drawn = [(name, set(re.findall(r"`(\w+)`", packages))) for name, packages in rows]
    assert drawn == list(reversed(LAYERS)), "docs/developing.md's layers differ from LAYERS"


def test_no_package_imports_a_higher_layer():
    violations = layer_violations(package_edges(import_graph()))
    assert not violations, "imports of a higher layer:\n" + "\n".join(violations)


def test_no_import_cycle_between_packages():
    edges = package_edges(import_graph())
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    cycles = all_cycles(graph)
    assert not cycles, "package cycles:\n" + "\n".join(
        " -> ".join(cycle) + "  (" + "; ".join(edges[(cycle[-2], cycle[-1])][:3]) + ")" for cycle in cycles)


def test_no_import_cycle_among_robot_modules():
    cycles = all_cycles(import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(cycle) for cycle in cycles)


def test_config_imports_no_feature_package():
    feature = ("robot.vision", "robot.link", "robot.solver", "robot.sim", "robot.run")
    imported = [m for m in import_graph()["robot.config"] if m.startswith(feature)]
    assert imported == [], f"robot/config.py imports {imported}"


def test_no_module_over_600_lines():
    sizes = {path.relative_to(ROOT): len(path.read_text().splitlines()) for path in module_files().values()}
    too_long = {str(path): lines for path, lines in sorted(sizes.items()) if lines > MAX_LINES}
    assert not too_long, "over %d lines (split by responsibility): %s" % (
        MAX_LINES, ", ".join(f"{path} ({lines})" for path, lines in too_long.items()))
