"""config.yaml: every setting documented, validated with file, key path and line."""

import pytest
import yaml

from robot import config as config_module
from robot.config import ConfigError, load


def _write(tmp_path, text):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


def test_shipped_config_loads_and_equals_defaults():
    loaded = load()
    assert loaded == config_module.defaults()


def test_shipped_config_lists_every_setting():
    raw = yaml.safe_load((config_module.PROJECT_ROOT / "config.yaml").read_text())
    for key, _ in config_module.iter_settings():
        node = raw
        for part in key.split("."):
            assert isinstance(node, dict) and part in node, f"config.yaml does not list {key}"
            node = node[part]


def test_every_setting_has_a_doc():
    for key, spec in config_module.iter_settings():
        assert spec.doc.strip(), key


def test_unknown_key_names_path_and_line(tmp_path):
    path = _write(tmp_path, "robot:\n  timing:\n    quater_turn_ms: 80\n")
    with pytest.raises(ConfigError) as info:
        load(path)
    assert str(info.value).startswith(f"{path}:3: robot.timing.quater_turn_ms: unknown setting")


def test_wrong_type(tmp_path):
    path = _write(tmp_path, "robot:\n  timing:\n    regrip_ms: [1]\n")
    with pytest.raises(ConfigError, match=r":3: robot.timing.regrip_ms: expected a whole number, got a list"):
        load(path)


def test_wrong_type_says_what_to_write(tmp_path):
    path = _write(tmp_path, "run:\n  verify_after: yes please\n")
    with pytest.raises(ConfigError, match=r":2: run.verify_after: expected true or false, got 'yes please'"):
        load(path)


def test_out_of_range(tmp_path):
    path = _write(tmp_path, "\nrobot:\n  timing:\n    half_turn_ms: 0\n")
    with pytest.raises(ConfigError, match=r":4: robot.timing.half_turn_ms: 0 is below the minimum 1"):
        load(path)


def test_bad_pairs_and_start_grip(tmp_path):
    path = _write(tmp_path, "robot:\n  pairs:\n    RL: [R, X]\n")
    with pytest.raises(ConfigError, match=r":3: robot.pairs: pair 'RL': 'X' is not a face"):
        load(path)
    path = _write(tmp_path, "robot:\n  start_grip: UD\n")
    with pytest.raises(ConfigError, match=r":2: robot.start_grip: 'UD' is not a pair"):
        load(path)


def test_yaml_syntax_error_has_line(tmp_path):
    path = _write(tmp_path, "robot:\n  timing: [\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load(path)


def test_missing_file():
    with pytest.raises(ConfigError, match="cannot read config file"):
        load("/nonexistent/config.yaml")


def test_empty_file_gives_defaults(tmp_path):
    assert load(_write(tmp_path, "")) == config_module.defaults()


def test_renamed_key_still_accepted_with_a_note(tmp_path, capsys):
    config = load(_write(tmp_path, "scan:\n  colors_file: my/colours.yaml\n"))
    assert config.scan.colours_file == "my/colours.yaml"
    assert not hasattr(config.scan, "colors_file")
    note = capsys.readouterr().err
    assert "c.yaml:2: scan.colors_file is the old name of scan.colours_file" in note
    assert config.notes and "scan.colours_file" in config.notes[0]
    with pytest.raises(ConfigError, match=r":3: scan.colours_file: given twice \(once as scan.colors_file"):
        load(_write(tmp_path, "scan:\n  colors_file: a.yaml\n  colours_file: b.yaml\n"))


def test_config_has_no_leftover_section_markers():
    for path in (config_module.PROJECT_ROOT / "config.yaml", config_module.PROJECT_ROOT / "robot" / "config.py"):
        assert "settings>" not in path.read_text(), f"{path}: a leftover '# <... settings>' marker"


def test_yaml_syntax_errors_name_the_line_and_the_fix(tmp_path):
    path = _write(tmp_path, "robot:\n\tstart_grip: RL\n")
    with pytest.raises(ConfigError) as info:
        load(path)
    assert str(info.value) == (f"{path}:2: column 1: not valid YAML: found character '\\t' that cannot start any "
                               "token; indent with spaces, not tabs")
    path = _write(tmp_path, "robot:\n  pairs:\n    RL: [R, L\n    FB: [F, B]\n")
    with pytest.raises(ConfigError) as info:
        load(path)
    assert str(info.value).startswith(f"{path}:4: column 7: not valid YAML: expected ',' or ']'")
    assert "(while parsing a flow sequence that starts on line 3)" in str(info.value)
    assert "<unicode string>" not in str(info.value)
