"""The settings as typed objects: one frozen dataclass per section, read by attribute only."""

from __future__ import annotations

import ast
import dataclasses
import typing
from pathlib import Path

import pytest

from robot import config as config_module
from robot import config_types
from robot.config_schema import SCHEMA, Setting

ROOT = Path(__file__).resolve().parents[1]
# The loader, its schema, the typed sections and the validated saving read the plain data.
CONFIG_MODULES = {"config.py", "config_schema.py", "config_types.py", "config_edit.py"}
SECTIONS = frozenset(SCHEMA)


def _keys(schema: dict) -> set[str]:
    keys = set(schema)
    for spec in schema.values():
        if isinstance(spec, dict):
            keys |= _keys(spec)
        elif isinstance(spec, Setting) and isinstance(spec.item, dict):
            keys |= _keys(spec.item)
    return keys


SETTING_KEYS = frozenset(_keys(SCHEMA) | _keys(SCHEMA["motion"]["arms"]["R"]))
# Names that hold a section (decode's and the link's `settings`, the board's `motion`): read by key, a
# setting's name gives them away.
SECTION_HOLDERS = {"settings", "motion", "m", "s", "c", "cam", "p", "link", "second", "section"}


def _dataclass_of(hint):
    """The section dataclass a field holds: itself, the items of a tuple, the values of a mapping."""
    if dataclasses.is_dataclass(hint):
        return hint
    args = [a for a in typing.get_args(hint) if a is not type(None) and a is not Ellipsis]
    return next((a for a in args if dataclasses.is_dataclass(a)), None)


def _check_against_schema(kind, schema: dict, where: str) -> None:
    hints = typing.get_type_hints(kind)
    fields = {f.name for f in dataclasses.fields(kind) if f.compare}
    assert fields == set(schema), f"{where}: fields {sorted(fields)} but the schema has {sorted(schema)}"
    for key, spec in schema.items():
        inner = _dataclass_of(hints[key])
        if isinstance(spec, dict):
            if where == "config.motion" and key == "arms":  # a section per arm, held as a mapping of ArmConfig
                _check_against_schema(inner, next(iter(spec.values())), f"{where}.{key}.<arm>")
            else:
                _check_against_schema(inner, spec, f"{where}.{key}")
        elif isinstance(spec, Setting) and isinstance(spec.item, dict):  # a list of sections (scan.views)
            _check_against_schema(inner, spec.item, f"{where}.{key}[]")
        else:
            assert inner is None, f"{where}.{key}: a setting held as a section"


def test_the_dataclasses_name_every_setting_of_the_schema():
    _check_against_schema(config_types.Config, SCHEMA, "config")


def test_loaded_settings_are_typed_frozen_and_read_by_attribute_only():
    config = config_module.load()
    assert config.link.ack_timeout_ms == 200 and isinstance(config.camera.fps, float)
    assert config.motion.arms["R"].servo_open_us is None and config.robot.turn_angles == (90, 180, -90)
    assert config.scan.views[0].facelets[:2] == ("U1", "U2")
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.link.ack_timeout_ms = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        config["link"]  # type: ignore[index]
    with pytest.raises(TypeError):
        config.link["ack_timeout_ms"]  # type: ignore[index]


def test_with_settings_changes_a_copy_and_names_an_unknown_key():
    config = config_module.defaults()
    changed = config_module.with_settings(config, {
        "tables.dir": "elsewhere", "motion.arms.B.invert": True,
        "scan.views": [{"name": "only", "actions": [{"op": "grip", "pair": "RL"}], "facelets": ["U1"],
                        "camera": "main"}]})
    assert changed.tables.dir == "elsewhere" and changed.motion.arms["B"].invert is True
    assert changed.scan.views == (config_types.ScanViewConfig("only", ({"op": "grip", "pair": "RL"},), ("U1",), "main"),)
    assert config == config_module.defaults(), "the original is unchanged"
    with pytest.raises(KeyError, match="link.ack_timeout: no setting 'ack_timeout'"):
        config_module.with_settings(config, {"link.ack_timeout": 1})


def config_subscripts(package: Path) -> list[str]:
    """`config["..."]`-style reads outside the config modules: a subscript by a string of an expression
    named like a config (config, cfg, self.config, scan_cfg...), a section's name read off a call
    (`defaults()["motion"]`), or a setting's name read off a name that holds sections (`motion["grip_ms"]`)."""
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.parent == package and path.name in CONFIG_MODULES:
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not isinstance(node, ast.Subscript) or not isinstance(node.ctx, ast.Load):
                continue
            key = node.slice.value if isinstance(node.slice, ast.Constant) else None
            if not isinstance(key, str):
                continue
            base = node.value
            name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
            config_like = "config" in name.lower() or "cfg" in name.lower()
            if config_like or (key in SECTIONS and isinstance(base, ast.Call)) or \
                    (name in SECTION_HOLDERS and key in SETTING_KEYS):  # also defaults()["motion"], m["grip_ms"]
                found.append(f"{path.relative_to(package.parent)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_outside_the_config_modules_subscripts_the_config():
    found = config_subscripts(ROOT / "robot")
    assert not found, "read settings as attributes (config.link.port), not keys:\n" + "\n".join(found)
