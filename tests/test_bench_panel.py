"""bench/panel.py's cost of watching compares like with like: `cube-robot run --seed N --scramble S` and the
panel's new cube `{"scramble": S, "seed": run_robot_seed(N)}` build the simulated robot with the same cube
and the same simulation seed (the webcam's noise comes from it)."""

from __future__ import annotations

import pytest

from robot import config as config_module
from robot import cube
from robot.cli import build_parser
from robot.panel.held import HeldRobot
from robot.run.options import RunOptions
from robot.run.simulated import run_simulated
from robot.sim import robot_sim

from benches import load_bench

bench = load_bench("panel")


class Built(Exception):
    """Raised by the stand-in SimulatedRobot: what it was built with, and nothing runs."""


def capture(monkeypatch) -> list[tuple[str, int]]:
    built: list[tuple[str, int]] = []

    def simulated_robot(config, state, *args, seed: int = 0, **kwargs):
        built.append((state.to_facelets(), seed))
        raise Built

    monkeypatch.setattr(robot_sim, "SimulatedRobot", simulated_robot)
    return built


@pytest.mark.parametrize("seed", [0, 7, 19])
def test_run_and_the_panel_get_the_same_cube_and_simulation_seed(monkeypatch, seed):
    built = capture(monkeypatch)
    scramble = bench.scramble_for(seed)
    args = build_parser().parse_args(["run", "--sim", "--seed", str(seed), "--scramble", scramble])
    config = config_module.defaults()
    with pytest.raises(Built):
        run_simulated(config, RunOptions.from_args(args), lambda text: None)
    with pytest.raises(Built):  # what POST /api/sim/new-cube builds (robot/panel/session.py new_cube)
        HeldRobot.simulated_robot(config, cube.SOLVED.apply(cube.parse_moves(scramble)),
                                  seed=bench.run_robot_seed(seed))
    (run_cube, run_seed), (panel_cube, panel_seed) = built
    assert run_cube == panel_cube and run_seed == panel_seed


def test_scrambles_differ_by_seed_and_move_the_cube():
    scrambles = [bench.scramble_for(seed) for seed in range(20)]
    assert len(set(scrambles)) == 20
    for scramble in scrambles:
        assert cube.SOLVED.apply(cube.parse_moves(scramble)).to_facelets() != cube.SOLVED.to_facelets()
