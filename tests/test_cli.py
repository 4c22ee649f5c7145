"""Every command: help text with examples, and --config."""

import argparse

from robot.cli import build_parser


def _leaf_parsers(parser, prefix=()):
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not actions:
        yield prefix, parser
        return
    for name, sub in actions[0].choices.items():
        yield from _leaf_parsers(sub, prefix + (name,))


def test_every_command_has_examples_and_config():
    leaves = list(_leaf_parsers(build_parser()))
    names = {" ".join(p) for p, _ in leaves}
    for expected in ("solve", "run", "history", "doctor", "tables build", "calibrate colors", "calibrate colours",
                     "calibrate timing", "vision decode", "vision show"):
        assert expected in names, names
    for path, parser in leaves:
        text = parser.format_help()
        assert "--config" in text, f"cube-robot {' '.join(path)} does not take --config"
        assert "example" in text.lower(), f"cube-robot {' '.join(path)} has no examples in its help"


def test_vision_decode_uses_the_configured_colours_file(tmp_path, capsys):
    """`vision decode --config X` reads X's scan.colours_file (not a fixed default path)."""
    import json

    from robot import cli
    from robot import config as config_module
    from robot.vision.colour import Calibration, ColourStats

    palette = {"white": (235, 235, 230), "red": (185, 25, 35), "green": (25, 155, 70),
               "yellow": (235, 215, 40), "orange": (245, 110, 25), "blue": (25, 75, 185)}
    readings = [list(rgb) for rgb in palette.values() for _ in range(4)]  # solved cube, faces U R F D L B
    (tmp_path / "readings.json").write_text(json.dumps(readings))
    calibration = Calibration({name: ColourStats.from_rgb([rgb] * 4) for name, rgb in palette.items()})
    calibration.created = "2026-01-02T03:04:05+00:00"
    calibration.save(tmp_path / "mine.yaml")
    text = (config_module.PROJECT_ROOT / "config.yaml").read_text()
    for name, colours_file in (("with.yaml", tmp_path / "mine.yaml"), ("without.yaml", tmp_path / "none.yaml")):
        assert "colours_file: calibration/colors.yaml" in text
        (tmp_path / name).write_text(text.replace("colours_file: calibration/colors.yaml",
                                                  f"colours_file: {colours_file}"))

    outputs = {}
    for name in ("with.yaml", "without.yaml"):
        code = cli.main(["vision", "decode", "--json", "--config", str(tmp_path / name), str(tmp_path / "readings.json")])
        outputs[name] = json.loads(capsys.readouterr().out)
        assert code == 0 and outputs[name]["ok"] is True
    assert outputs["with.yaml"]["calibration"] == "2026-01-02T03:04:05+00:00"
    assert outputs["with.yaml"]["colours"]["U"] == "white"  # colour names come from that calibration
    assert outputs["without.yaml"]["calibration"] is None


def test_ctrl_c_while_the_commands_load_is_a_short_message_not_a_traceback(monkeypatch, capsys):
    """Ctrl-C in the first second (the commands' modules are still importing) ends like any Ctrl-C."""
    from robot import cli

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["jog", "R", "90"]) == 130
    assert "cube-robot: interrupted" in capsys.readouterr().err
