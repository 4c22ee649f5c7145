"""config.yaml: loaded and validated in this one place.

SCHEMA (robot/config_schema.py) lists every setting: its type, default, allowed range and
meaning.  `load()` reads a YAML file, fills in defaults and rejects unknown keys, wrong
types and out-of-range values with a ConfigError naming the file, the key
path and the line.  The result is a `Config` of frozen section dataclasses
(robot/config_types.py) whose values are already checked, so the rest of the
code reads attributes (`config.link.ack_timeout_ms`) and never re-validates.
`with_settings` gives a changed copy (programs and tests; not validated).

Sections are owned by the modules that use them (robot: actions/solver,
link/firmware: link, camera/scan/vision: vision, sim/run: sim and run), but
they are all declared in config_schema.py so there is one schema and one error format.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import sys
from pathlib import Path
from typing import Any, Mapping

import yaml

from . import paths
from .config_schema import SCHEMA, Setting  # the schema lives there; config.SCHEMA still works
from .config_types import Config, build, convert, field_type

# A checkout's root, or an installed copy's per-user data folder (robot/paths.py says which).
PROJECT_ROOT = paths.data_root()
DEFAULT_CONFIG_PATH = paths.default_config_path()


def project_path(value) -> Path:
    """A path from a setting: absolute, or relative to the project root (robot/paths.py)."""
    path = Path(value)
    return path if path.is_absolute() else PROJECT_ROOT / path


def read_yaml_file(path, error_type, what: str, hint: str):
    """Parse a YAML data file; a missing/unreadable file or bad YAML raises error_type naming it."""
    path = Path(path)
    try:
        return yaml.safe_load(path.read_text())
    except OSError as exc:
        raise error_type(f"cannot read {what} {path}: {exc.strerror}; {hint}") from None
    except yaml.YAMLError as exc:
        raise error_type(f"{path}: not valid YAML: {exc}") from None


def _yaml_problem(exc: yaml.YAMLError) -> tuple[int | None, str, str]:
    """(line, where, message) of a YAML syntax error, in the file's own lines (not PyYAML's
    "<unicode string>" marks)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context, context_mark = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    message = f"not valid YAML: {problem}"
    if context and context_mark is not None and (mark is None or context_mark.line != mark.line):
        message += f" ({context} that starts on line {context_mark.line + 1})"
    if "character '\\t'" in problem:  # PyYAML names a tab by its repr
        message += "; indent with spaces, not tabs"
    where = f"column {mark.column + 1}" if mark is not None else ""
    return (mark.line + 1 if mark is not None else None), where, message


class ConfigError(ValueError):
    """A setting that is unknown, of the wrong type or out of range."""

    def __init__(self, file, line, key_path, message):
        self.file, self.line, self.key_path = str(file), line, key_path
        where = f"{file}:{line}" if line else str(file)
        super().__init__(f"{where}: {key_path or '(top level)'}: {message}")


# Settings renamed since release: old dotted key -> new dotted key (same section).  An old
# key still works, with a note on stderr saying what to rename.
RENAMED = {
    "scan.colors_file": "scan.colours_file",
}

# Settings retired since release: dotted key -> what took their place.  A file that still has
# one loads (a config.yaml copied from an older default has it), with a note on stderr.
RETIRED = {
    "robot3.timing": "the 3x3x3 robot's turns and tilts take robot.timing and its grippers the firmware's "
                     "time from the `motion` section (robot/plan3.py)",
}


def defaults() -> Config:
    """The built-in defaults (what an empty config.yaml gives)."""
    return build(Config, _fill(SCHEMA, None, "<defaults>", ""))


def load(path: str | os.PathLike | None = None) -> Config:
    """Load and validate a config file (default: config.yaml at the project root, made on
    an installed copy's first use)."""
    if path is None:
        try:
            paths.ensure_default_config()
        except OSError as exc:
            raise ConfigError(DEFAULT_CONFIG_PATH, None, "", f"cannot make the default config file "
                              f"({exc.filename}: {exc.strerror})") from None
    path = Path(path) if path is not None else DEFAULT_CONFIG_PATH
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(path, None, "", f"cannot read config file: {exc.strerror}") from None
    try:
        node = yaml.compose(text)
    except yaml.YAMLError as exc:
        raise ConfigError(path, *_yaml_problem(exc)) from None
    notes: list[str] = []
    plain = _fill(SCHEMA, node, path, "", notes)
    _check_cross_fields(plain, path, node)
    for note in notes:
        print(f"cube-robot: {note}", file=sys.stderr)
    return dataclasses.replace(build(Config, plain), path=path, notes=tuple(notes))


def with_settings(config: Config, changes: Mapping[str, Any]) -> Config:
    """A copy of `config` with settings replaced by dotted key ({"tables.dir": "x", "motion.arms.R.invert":
    True}); a value is given as config.yaml holds it (lists, dicts) or as the settings object.  Not
    validated: for programs and tests that need a setting a file would be refused for."""
    for key, value in changes.items():
        config = _replaced(config, key.split("."), value, key)
    return config


def _replaced(obj: Any, keys: list[str], value: Any, dotted: str) -> Any:
    head, rest = keys[0], keys[1:]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if head not in {f.name for f in dataclasses.fields(obj)}:
            raise KeyError(f"{dotted}: no setting {head!r} here")
        new = _replaced(getattr(obj, head), rest, value, dotted) if rest else \
            convert(field_type(type(obj), head), value)
        return dataclasses.replace(obj, **{head: new})
    if isinstance(obj, Mapping) and rest:  # motion.arms.<arm>.<setting>
        return {**obj, head: _replaced(obj[head], rest, value, dotted)}
    raise KeyError(f"{dotted}: {head!r} is not a section or setting")


def _line(node) -> int | None:
    return node.start_mark.line + 1 if node is not None else None


def _fill(schema: dict, node, path, prefix, notes=None) -> dict:
    """Walk the YAML node tree alongside the schema (notes: collects deprecation notes); plain dicts."""
    result: dict = {}
    given = {}
    renamed_from = {}
    if node is not None and not (isinstance(node, yaml.ScalarNode) and node.value in ("", "~", "null")):
        if not isinstance(node, yaml.MappingNode):
            raise ConfigError(path, _line(node), prefix.rstrip("."), "expected a section (key: value lines)")
        for key_node, value_node in node.value:
            key = key_node.value
            if prefix + key in RENAMED:
                old_key, key = prefix + key, RENAMED[prefix + key][len(prefix):]
                renamed_from[key] = old_key
                if notes is not None:
                    notes.append(f"{path}:{_line(key_node)}: {old_key} is the old name of {prefix + key}; "
                                 "still accepted, but please rename it")
            if prefix + key in RETIRED:
                if notes is not None:
                    notes.append(f"{path}:{_line(key_node)}: {prefix + key} is no longer used (ignored): "
                                 f"{RETIRED[prefix + key]}; please delete it")
                continue
            if key in given:
                old_name = f" (once as {renamed_from[key]}, its old name)" if key in renamed_from else ""
                raise ConfigError(path, _line(key_node), prefix + key, "given twice" + old_name)
            if key not in schema:
                known = ", ".join(sorted(schema))
                raise ConfigError(path, _line(key_node), prefix + key, f"unknown setting (known here: {known})")
            given[key] = value_node
    for key, spec in schema.items():
        value_node = given.get(key)
        if isinstance(spec, dict):
            result[key] = _fill(spec, value_node, path, prefix + key + ".", notes)
        elif value_node is None:
            result[key] = copy.deepcopy(spec.default)
        else:
            result[key] = _value(spec, value_node, path, prefix + key)
    return result


def _scalar(kind, node, path, key_path):
    if not isinstance(node, yaml.ScalarNode):
        raise ConfigError(path, _line(node), key_path, f"expected {_kind_words(kind)}, got a list or section")
    value = yaml.safe_load(node.value) if node.style is None else node.value
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if kind is str and value is not None and not isinstance(value, str):
        value = node.value
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ConfigError(path, _line(node), key_path, f"expected {_kind_words(kind)}, got {node.value!r}")
    return value


# What a maker types for each kind of setting (the error names it).
_KIND_WORDS = {int: "a whole number", float: "a number", bool: "true or false", str: "a text"}


def _kind_words(kind) -> str:
    return _KIND_WORDS.get(kind, kind.__name__)


def _value(spec: Setting, node, path, key_path):
    line = _line(node)
    if spec.nullable and isinstance(node, yaml.ScalarNode) and node.value in ("", "~", "null") and node.style is None:
        return None
    value: Any
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


def _check_cross_fields(config: dict, path, root) -> None:
    """Checks that involve more than one setting."""
    robot = config["robot"]
    grip = robot["start_grip"]
    if grip != "any" and grip not in robot["pairs"]:
        raise ConfigError(
            path, _node_line(root, ["robot", "start_grip"]), "robot.start_grip",
            f"{grip!r} is not a pair (pairs: {', '.join(robot['pairs'])}, or 'any')",
        )
    _check_motion(config, path, root)
    from .scan_sequence3 import finish_problem3  # imported when used, as the views' check

    problem = finish_problem3(config["scan3"]["views"], config["scan3"]["finish"])
    if problem:
        raise ConfigError(path, _node_line(root, ["scan3", "finish"]), "scan3.finish", problem)
    camera = config["camera"]
    if camera["exposure_ms"] > 1000.0 / camera["fps"]:  # a camera cannot expose longer than its frame period
        raise ConfigError(path, _node_line(root, ["camera", "exposure_ms"]), "camera.exposure_ms",
                          f"{camera['exposure_ms']:g} ms is longer than the frame period at camera.fps "
                          f"{camera['fps']:g} ({1000.0 / camera['fps']:.1f} ms)")


def _check_motion(config: dict, path, root) -> None:
    """Per arm: a zero offset of a whole turn or more is a mistake (the arm would go round before
    stopping); a gripper whose open and closed widths are equal never moves.  The open jaws must
    stand outside a turning layer's reach (the firmware refuses JAWS otherwise: JAWS_IN_REACH)."""
    motion = config["motion"]
    gap, cube = motion["jaw_open_gap_mm"], motion["cube_mm"]
    if (2 * gap + cube) ** 2 <= 2 * cube ** 2:  # gap <= cube/2 (sqrt 2 - 1), in whole numbers as regrip.cpp
        raise ConfigError(
            path, _node_line(root, ["motion", "jaw_open_gap_mm"]) or _node_line(root, ["motion", "cube_mm"]),
            "motion.jaw_open_gap_mm",
            f"{gap} mm is inside a turning layer's reach: its corners sweep {cube / 2 * (2 ** 0.5 - 1):.1f} mm past "
            f"the faces of a {cube} mm cube (motion.cube_mm), so a turn would hit the open jaws (open them further)")
    for arm, settings in motion["arms"].items():
        offset = settings["zero_offset_steps"]
        if abs(offset) >= motion["steps_per_rev"]:
            raise ConfigError(
                path, _node_line(root, ["motion", "arms", arm, "zero_offset_steps"]),
                f"motion.arms.{arm}.zero_offset_steps",
                f"{offset} steps is a whole turn or more (motion.steps_per_rev is {motion['steps_per_rev']})",
            )
        open_us = motion["servo_open_us"] if settings["servo_open_us"] is None else settings["servo_open_us"]
        closed_us = motion["servo_closed_us"] if settings["servo_closed_us"] is None else settings["servo_closed_us"]
        if open_us == closed_us:  # the gripper would never move (and open and closed could not be told apart)
            keys = ["motion", "arms", arm, "servo_closed_us"]
            line = _node_line(root, keys) or _node_line(root, keys[:3] + ["servo_open_us"]) or \
                _node_line(root, ["motion", "servo_closed_us"])
            raise ConfigError(path, line, f"motion.arms.{arm}.servo_closed_us",
                              f"gripper {arm}'s open and closed widths are both {open_us} us: it would never move "
                              "(`cube-robot tune grippers` finds the two widths)")


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


def iter_settings(schema=None, prefix=""):
    """(dotted key, Setting) for every leaf."""
    for key, spec in (schema or SCHEMA).items():
        if isinstance(spec, dict):
            yield from iter_settings(spec, prefix + key + ".")
        else:
            yield prefix + key, spec
