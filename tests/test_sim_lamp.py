"""The simulated lamp (robot/sim/lamp.py, SIMULATED): a reflection fixed where the lamp is, on every frame
of a view, washing the stickers that sit there; its strength as config says; `--light` reaches the renderer
in a run; the default config draws the pictures as before."""

from dataclasses import replace

import numpy as np
import pytest

from robot import config as config_module
from robot import config_schema, cube
from robot.run import commands as run_commands
from robot.run.options import RunOptions
from robot.run.simulated import run_simulated
from robot.scan_sequence import ScanSequence
from robot.sim import lamp, render
from robot.sim.robot_sim import SimulatedRobot
from robot.vision.camera_geometry import Pose, facelet_quads
from conftest import scratch_config

CONFIG = config_module.defaults()
POSE = Pose.from_config(CONFIG)
SEQUENCE = ScanSequence.from_config(CONFIG)
PLAIN = render.Lighting(noise_sigma=0.0, vignetting=0.0)  # so a pixel's mix with white can be measured
START = cube.SOLVED.apply("R U2 F' L D B2").to_facelets()


def washed(frame: np.ndarray, clean: np.ndarray, view_index: int, threshold: float = 20.0) -> set[str]:
    """Facelets (final-frame names) of the view whose sticker centre is lighter than without the lamp."""
    view = SEQUENCE.views[view_index]
    out = set()
    for quad, final in zip(facelet_quads(POSE, view.facelets), SEQUENCE.final_positions(view_index)):
        x, y = np.round(quad.mean(axis=0)).astype(int)
        lighter = frame[y - 2:y + 3, x - 2:x + 3].astype(float).mean() - clean[y - 2:y + 3, x - 2:x + 3].astype(float).mean()
        if lighter > threshold:
            out.add(cube.facelet_name(final))
    return out


def glare(strength: float | None = None):
    found, brightness = lamp.preset_lamp(POSE, "glare", strength=strength)
    assert found is not None and brightness == 1.0
    return found


def test_the_highlight_is_on_every_frame_of_a_view_and_washes_other_stickers_in_another_view():
    lit = replace(render.Lighting(), lamp=glare())
    states = SEQUENCE.states_at_views(START)
    noisy_frames = [render.render_state(states[0], POSE, lit, np.random.default_rng(seed)) for seed in (1, 2)]
    clean = render.render_state(states[0], POSE, render.Lighting(), np.random.default_rng(1))
    first, second = (washed(frame, clean, 0) for frame in noisy_frames)
    assert first and first == second  # two frames of one view: the same washed stickers
    other = render.render_state(states[1], POSE, lit, np.random.default_rng(3))
    other_clean = render.render_state(states[1], POSE, render.Lighting(), np.random.default_rng(3))
    in_other_view = washed(other, other_clean, 1)
    assert in_other_view and not in_other_view & first  # another view: other stickers, the first ones clean


@pytest.mark.parametrize("strength", [0.2, 0.4, 0.7])
def test_strength_is_the_mix_with_white_at_the_centre_of_the_most_washed_sticker(strength):
    facelets = cube.SOLVED.to_facelets().replace("U", "B")  # a dark top face: the mix is measured well
    on = render.render_state(facelets, POSE, replace(PLAIN, lamp=glare(strength)))
    off = render.render_state(facelets, POSE, PLAIN)
    mixes = lamp.position_mix(POSE, glare(strength))
    worst = max(mixes, key=mixes.get)
    assert abs(mixes[worst] - strength) < 1e-6
    x, y = np.round(facelet_quads(POSE, [cube.facelet_name(worst)])[0].mean(axis=0)).astype(int)
    lit, clean = on[y, x].astype(float), off[y, x].astype(float)
    measured = (lit - clean) / (255.0 - clean)
    assert np.all(np.abs(measured - strength) < 0.04), (measured, strength)
    assert all(m <= strength + 1e-9 for m in mixes.values())


def test_view_mix_names_the_stickers_each_view_washes():
    mixes = lamp.view_mix(POSE, glare(), SEQUENCE)
    assert len(mixes) == len(SEQUENCE.views)
    worst = [int(np.nanargmax(m)) for m in mixes]
    assert all(abs(np.nanmax(m) - 0.4) < 1e-6 for m in mixes)
    assert len(set(worst)) == len(worst)  # a different sticker under the reflection in each view
    assert sum(int(np.sum(~np.isnan(m))) for m in mixes) == cube.FACELET_COUNT  # 8 + 8 + 4 + 4


def test_position_in_the_camera_frame_puts_the_lamp_back_where_it_was():
    aimed = glare()
    again, _ = lamp.preset_lamp(POSE, "glare", position_mm=lamp.camera_frame_position(POSE, aimed))
    assert again is not None and np.allclose(again.position_mm, aimed.position_mm)
    moved, _ = lamp.preset_lamp(POSE, "glare", position_mm=(200.0, 420.0, -46.0))
    assert moved is not None and lamp.position_mix(POSE, moved) != lamp.position_mix(POSE, aimed)


def test_a_preset_named_wrong_is_refused_naming_the_choices(tmp_path):
    with pytest.raises(lamp.LampError, match="none, glare, side, dim"):
        lamp.preset_lamp(POSE, "bright")
    with pytest.raises(ValueError, match="none, glare, side, dim"):
        SimulatedRobot(CONFIG, cube.SOLVED, firmware="mock", light="bright")
    path = tmp_path / "config.yaml"
    path.write_text("camera:\n  lighting:\n    preset: bright\n")
    with pytest.raises(config_module.ConfigError, match="glare"):
        config_module.load(path)
    # The run's choices and the config's are the lamp's (the run imports nothing of sim to say them).
    assert run_commands.LIGHT_CHOICES == lamp.CHOICES
    assert config_schema.SCHEMA["camera"]["lighting"]["preset"].choices == lamp.CHOICES


def test_config_sets_the_lamp(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("camera:\n  lighting:\n    preset: side\n    strength: 0.6\n    spread_deg: 8\n")
    found, _ = lamp.from_config(config_module.load(path))
    assert found is not None and found.name == "side" and found.spread_deg == 8.0
    assert abs(max(lamp.position_mix(POSE, found).values()) - 0.6) < 1e-6
    dim, brightness = lamp.from_config(CONFIG, name="dim")
    assert dim is not None and brightness < 1.0
    path.write_text("camera:\n  lighting:\n    preset: glare\n    position_mm: [150, 420, -46]\n")
    placed, _ = lamp.from_config(config_module.load(path))
    assert placed is not None and np.allclose(lamp.camera_frame_position(POSE, placed), (150.0, 420.0, -46.0))


def test_the_default_config_draws_the_pictures_as_before():
    robot = SimulatedRobot(CONFIG, cube.SOLVED, firmware="mock")
    assert robot.lamp is None and robot.light_note is None
    assert robot.lighting() == render.Lighting()  # the light every scan had before the lamp
    default = lamp.lit(render.Lighting(), *lamp.from_config(CONFIG))
    frames_default, _ = render.render_scan(START, SEQUENCE, POSE, default, seed=5)
    frames_off, _ = render.render_scan(START, SEQUENCE, POSE, render.Lighting(), seed=5)
    frames_glare, _ = render.render_scan(START, SEQUENCE, POSE, replace(render.Lighting(), lamp=glare()), seed=5)
    for name, frame in frames_default.items():
        assert np.array_equal(frame, frames_off[name])
        assert not np.array_equal(frame, frames_glare[name])


def test_light_glare_reaches_the_renderer_in_a_run(tmp_path, monkeypatch):
    drawn = []
    real = render.render_state

    def recording(facelets, pose, lighting=render.Lighting(), *args, **kwargs):
        drawn.append((facelets, lighting.lamp))
        return real(facelets, pose, lighting, *args, **kwargs)

    monkeypatch.setattr(render, "render_state", recording)
    config = config_module.load(scratch_config(tmp_path))
    report = run_simulated(config, RunOptions(sim=True, firmware="mock", seed=4, light="glare"), lambda text: None)
    assert report.solved and report.verify  # the check rescan ran, under the lamp too
    assert all(found is not None and found.name == "glare" for _, found in drawn)
    solved_faces = [facelets for facelets, _ in drawn if all(len(set(facelets[f * 4:f * 4 + 4])) == 1 for f in range(6))]
    assert solved_faces and len(solved_faces) < len(drawn)  # the check rescan's solved cube too, under the lamp
    assert "SIMULATED lamp" in report.sim_light and "glare" in report.sim_light
    assert "light       SIMULATED lamp on every scan: glare" in report.format()


def test_light_is_a_simulation_flag():
    assert RunOptions(light="glare").simulation_flags() == ["--light"]


def test_the_panel_holds_a_simulated_robot_under_its_lamp():
    from robot.panel.held import HeldRobot

    held = HeldRobot.simulated_robot(CONFIG, cube.SOLVED, firmware="mock", light="side")
    assert held.light == "side" and held.robot.lamp is not None and held.robot.lamp.name == "side"
    assert held.robot.camera.lighting.lamp is held.robot.lamp  # the live view's frames too, before any scan


def test_render_looks_gives_each_view_its_own_readings_and_mixes():
    lit = replace(render.Lighting(), lamp=glare())
    _, _, looks = render.render_looks(START, SEQUENCE, POSE, lit, seed=7)
    _, _, plain = render.render_looks(START, SEQUENCE, POSE, render.Lighting(), seed=7)
    assert [look.view for look in looks] == [view.name for view in SEQUENCE.views]
    for v, (look, before) in enumerate(zip(looks, plain)):
        seen = sorted(SEQUENCE.final_positions(v))
        assert sorted(np.flatnonzero(~np.isnan(look.mix))) == seen
        assert sorted(np.flatnonzero(~np.isnan(look.rgb[:, 0]))) == seen
        worst = int(np.nanargmax(look.mix))
        assert look.rgb[worst].min() > before.rgb[worst].min() + 20  # washed towards white
        clean = [i for i in seen if look.mix[i] < 0.001]  # the front face's stickers in the first two views
        assert len(clean) == (4 if v < 2 else 0)
        assert np.allclose(look.rgb[clean], before.rgb[clean], atol=4)


def test_the_run_command_refuses_a_light_named_wrong_naming_the_choices(capsys):
    from robot.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--sim", "--light", "bright"])
    assert "choose from 'none', 'glare', 'side', 'dim'" in capsys.readouterr().err


def test_the_lamp_bench_counts_every_scan_and_the_adaptive_views():
    from benches import load_bench

    bench = load_bench("vision_lamp")
    rows = bench.sweep(CONFIG, [(lamp.NONE, 0.0), ("glare", 0.4)], bench.cubes(3, 1, room=False))
    assert [(r["preset"], r["scans"], r["washed"]) for r in rows] == [("none", 3, 0), ("glare", 3, 8)]
    assert rows[0]["exact"] == 3 and rows[0]["adaptive"]["exact"] == 3
    for r in rows:
        assert r["exact"] + r["refused"] + r["wrong"] == 3
        assert sum(r["adaptive"][k] for k in ("exact", "refused", "wrong")) == 3
        assert 2 * 3 <= r["adaptive"]["views"] <= 4 * 3  # adaptive_from 2: two views at least, four at most
