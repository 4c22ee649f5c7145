"""config.yaml: loaded and validated in this one place.

SCHEMA lists every setting: its type, default, allowed range and meaning.
`load()` reads a YAML file, fills in defaults and rejects unknown keys, wrong
types and out-of-range values with a ConfigError naming the file, the key
path and the line.  The result is a plain nested dict (`Config`) whose values
are already checked, so the rest of the code never re-validates settings.

Sections are owned by the modules that use them (robot: actions/solver,
link/firmware: link, camera/scan/vision: vision, sim/run: sim and app), but
they are all declared here so there is one schema and one error format.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG_PATH = PROJECT_ROOT / "config.yaml"
ARM_FACES = "URFDLB"


class ConfigError(ValueError):
    """A setting that is unknown, of the wrong type or out of range."""

    def __init__(self, file, line, key_path, message):
        self.file, self.line, self.key_path = str(file), line, key_path
        where = f"{file}:{line}" if line else str(file)
        super().__init__(f"{where}: {key_path or '(top level)'}: {message}")


@dataclass
class Setting:
    """One leaf of the schema."""

    kind: Any  # int, float, bool, str, list, dict
    default: Any
    doc: str
    min: float | None = None
    max: float | None = None
    choices: tuple | None = None
    item: Any = None  # element type for list settings
    min_items: int = 0
    max_items: int | None = None
    check: Callable[[Any], str | None] | None = None  # returns an error text or None
    nullable: bool = False


def _check_pairs(pairs) -> str | None:
    if not pairs:
        return "needs at least one arm pair"
    seen = {}
    for name, faces in pairs.items():
        if not isinstance(faces, list) or not faces:
            return f"pair {name!r} must list the faces its arms grip, e.g. [R, L]"
        for face in faces:
            if face not in ARM_FACES:
                return f"pair {name!r}: {face!r} is not a face (use U R F D L B)"
            if face in seen:
                return f"face {face} is gripped by both pair {seen[face]!r} and pair {name!r}"
            seen[face] = name
    return None


def _check_angles(angles) -> str | None:
    bad = [a for a in angles if a not in (90, 180, -90, -180, 270, -270)]
    if bad:
        return f"angles must be quarter or half turns (90, 180, -90), got {bad}"
    return None


# Every setting.  Nested dicts are sections; Setting objects are leaves.
SCHEMA: dict = {
    "robot": {
        "pairs": Setting(
            dict, {"RL": ["R", "L"], "FB": ["F", "B"]},
            "arm pairs: name -> faces gripped by that pair's arms; exactly one pair holds at a time",
            check=_check_pairs,
        ),
        "turn_angles": Setting(
            list, [90, 180, -90], "angles an arm may turn its layer by (clockwise-positive from outside)",
            item=int, min_items=1, check=_check_angles,
        ),
        "start_grip": Setting(
            str, "any", "which pair holds the cube at the start: a pair name or 'any' (robot picks)"
        ),
        "timing": {
            "quarter_turn_ms": Setting(int, 80, "duration of a 90 degree arm turn", min=1, max=5000),
            "half_turn_ms": Setting(int, 130, "duration of a 180 degree arm turn", min=1, max=5000),
            "regrip_ms": Setting(int, 190, "duration of handing the cube to the other pair", min=1, max=5000),
        },
    },
    "tables": {
        "dir": Setting(str, "tables", "where solver tables are stored (relative to the project root)"),
    },
    # <link settings>
    # <vision settings>
    # <vision decode settings>
    # <app settings>
}


class Config(dict):
    """Validated settings as nested dicts, plus where they came from."""

    path: Path

    def section(self, dotted: str):
        node = self
        for part in dotted.split("."):
            node = node[part]
        return node


def defaults() -> Config:
    """The built-in defaults (what an empty config.yaml gives)."""
    return _fill(SCHEMA, None, "<defaults>", "")


def load(path: str | os.PathLike | None = None) -> Config:
    """Load and validate a config file (default: config.yaml at the project root)."""
    path = Path(path) if path is not None else DEFAULT_CONFIG_PATH
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(path, None, "", f"cannot read config file: {exc.strerror}") from None
    try:
        node = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError(path, mark.line + 1 if mark else None, "", f"not valid YAML: {exc}") from None
    config = _fill(SCHEMA, node, path, "")
    _check_cross_fields(config, path, node)
    config.path = path
    return config


def _line(node) -> int | None:
    return node.start_mark.line + 1 if node is not None else None


def _fill(schema: dict, node, path, prefix) -> Config:
    """Walk the YAML node tree alongside the schema."""
    result = Config()
    given = {}
    if node is not None and not (isinstance(node, yaml.ScalarNode) and node.value in ("", "~", "null")):
        if not isinstance(node, yaml.MappingNode):
            raise ConfigError(path, _line(node), prefix.rstrip("."), "expected a section (key: value lines)")
        for key_node, value_node in node.value:
            key = key_node.value
            if key in given:
                raise ConfigError(path, _line(key_node), prefix + key, "given twice")
            if key not in schema:
                known = ", ".join(sorted(schema))
                raise ConfigError(path, _line(key_node), prefix + key, f"unknown setting (known here: {known})")
            given[key] = value_node
    for key, spec in schema.items():
        value_node = given.get(key)
        if isinstance(spec, dict):
            result[key] = _fill(spec, value_node, path, prefix + key + ".")
        elif value_node is None:
            result[key] = copy.deepcopy(spec.default)
        else:
            result[key] = _value(spec, value_node, path, prefix + key)
    return result


def _scalar(kind, node, path, key_path):
    if not isinstance(node, yaml.ScalarNode):
        raise ConfigError(path, _line(node), key_path, f"expected a {kind.__name__}, got a list or section")
    value = yaml.safe_load(node.value) if node.style is None else node.value
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if kind is str and value is not None and not isinstance(value, str):
        value = node.value
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ConfigError(path, _line(node), key_path, f"expected a {kind.__name__}, got {node.value!r}")
    return value


def _value(spec: Setting, node, path, key_path):
    line = _line(node)
    if spec.nullable and isinstance(node, yaml.ScalarNode) and node.value in ("", "~", "null") and node.style is None:
        return None
    if spec.kind is list:
        if not isinstance(node, yaml.SequenceNode):
            raise ConfigError(path, line, key_path, "expected a list, e.g. [a, b]")
        value = [_scalar_or_node(spec.item, item, path, f"{key_path}[{i}]") for i, item in enumerate(node.value)]
        if len(value) < spec.min_items:
            raise ConfigError(path, line, key_path, f"needs at least {spec.min_items} item(s)")
        if spec.max_items is not None and len(value) > spec.max_items:
            raise ConfigError(path, line, key_path, f"takes at most {spec.max_items} item(s)")
    elif spec.kind is dict:
        if not isinstance(node, yaml.MappingNode):
            raise ConfigError(path, line, key_path, "expected a mapping (key: value lines)")
        value = yaml.safe_load(yaml.serialize(node))
        if not isinstance(value, dict):
            raise ConfigError(path, line, key_path, "expected a mapping")
        value = {str(k): v for k, v in value.items()}
    else:
        value = _scalar(spec.kind, node, path, key_path)
        _check_range(spec, value, path, line, key_path)
    if spec.choices is not None and value not in spec.choices:
        raise ConfigError(path, line, key_path, f"must be one of {', '.join(map(str, spec.choices))}; got {value!r}")
    if spec.check is not None:
        problem = spec.check(value)
        if problem:
            raise ConfigError(path, line, key_path, problem)
    return value


def _scalar_or_node(item_kind, node, path, key_path):
    if item_kind is None:
        return yaml.safe_load(yaml.serialize(node))
    if isinstance(item_kind, dict):  # a list of sections
        return _fill(item_kind, node, path, key_path + ".")
    return _scalar(item_kind, node, path, key_path)


def _check_range(spec, value, path, line, key_path):
    if spec.min is not None and value < spec.min:
        raise ConfigError(path, line, key_path, f"{value} is below the minimum {spec.min}")
    if spec.max is not None and value > spec.max:
        raise ConfigError(path, line, key_path, f"{value} is above the maximum {spec.max}")


def _check_cross_fields(config: Config, path, root) -> None:
    """Checks that involve more than one setting."""
    robot = config["robot"]
    grip = robot["start_grip"]
    if grip != "any" and grip not in robot["pairs"]:
        raise ConfigError(
            path, _node_line(root, ["robot", "start_grip"]), "robot.start_grip",
            f"{grip!r} is not a pair (pairs: {', '.join(robot['pairs'])}, or 'any')",
        )


def _node_line(root, keys) -> int | None:
    """Line of a key path in the YAML tree (None if the key was defaulted)."""
    node = root
    for key in keys:
        if not isinstance(node, yaml.MappingNode):
            return None
        node = next((v for k, v in node.value if k.value == key), None)
        if node is None:
            return None
    return _line(node)


def default_yaml() -> str:
    """config.yaml text generated from SCHEMA (used by tests to keep the file complete)."""
    lines = []

    def walk(schema, indent):
        for key, spec in schema.items():
            pad = "  " * indent
            if isinstance(spec, dict):
                lines.append(f"{pad}{key}:")
                walk(spec, indent + 1)
            else:
                dumped = yaml.safe_dump(spec.default, default_flow_style=True).strip()
                if dumped.endswith("\n..."):
                    dumped = dumped[:-4].strip()
                if dumped == "...":
                    dumped = "null"
                lines.append(f"{pad}{key}: {dumped}  # {spec.doc}")

    walk(SCHEMA, 0)
    return "\n".join(lines) + "\n"


def iter_settings(schema=None, prefix=""):
    """(dotted key, Setting) for every leaf."""
    for key, spec in (schema or SCHEMA).items():
        if isinstance(spec, dict):
            yield from iter_settings(spec, prefix + key + ".")
        else:
            yield prefix + key, spec
