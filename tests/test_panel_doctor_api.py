"""The panel's doctor (robot/panel/doctor_api.py): the rows of `cube-robot doctor`'s checks, in its order,
read from the link and the camera the panel holds (the mock firmware on a pty and the simulated webcam):
nothing moves, no port is opened again, the held camera stays open, and on the simulated robot every
row says SIMULATED."""

from __future__ import annotations

import pytest

from robot import config as config_module
from robot.bringup.connection import ConnectedRobot
from robot.doctor.commands import CHECKS
from robot.doctor.simulated import StillCube
from robot.link import protocol as P
from robot.panel import doctor_api
from robot.panel.doctor_api import DoctorContext
from robot.run.ready import HeldCamera
from robot.sim.webcam import SimulatedCamera
from robot.vision.camera_geometry import Pose

TITLES = list(dict.fromkeys(title for title, _ in CHECKS))


@pytest.fixture
def held():
    """A robot and a camera as the panel holds them: the link open, the camera open and kept open."""
    config = config_module.load()
    with ConnectedRobot(config, sim=True, firmware="mock") as robot:
        camera = HeldCamera(SimulatedCamera(StillCube(config), Pose.from_config(config))).open()
        try:
            yield robot, camera
        finally:
            camera.release()


def _board(robot) -> tuple:
    return robot.link.where(), {arm: robot.arm_angle(arm) for arm in P.ARMS}


def _by_title(rows) -> dict:
    return {row["title"]: row for row in rows}


def test_the_doctors_rows_from_what_the_panel_holds_move_nothing(held):
    robot, camera = held
    before = _board(robot)
    rows = doctor_api.checks(robot.config, DoctorContext(link=robot.link, camera=camera, simulated=False))
    assert list(dict.fromkeys(row["title"] for row in rows)) == TITLES
    assert all(set(row) == {"title", "item", "status", "detail", "fix", "simulated"} for row in rows)
    rows_by = _by_title(rows)
    handshake = rows_by["firmware handshake"]
    assert handshake["status"] == "ok" and handshake["item"] == str(robot.link.url)
    assert rows_by["camera"]["status"] == "ok" and "frame" in rows_by["camera"]["detail"]
    # The arms check reads the board and says what a run will do; it homes nothing from a GET.
    arms = rows_by["motors and homing"]
    assert "drivers off" in arms["detail"] and "a run" in arms["detail"], arms
    # In the page's words: its Bring-up controls, not a terminal's command and prompt.
    assert "Bring-up, square each arm by eye (its +/- buttons, then Straight) before Start" in arms["detail"], arms
    assert not any("`cube-robot " in row["detail"] or "at its prompt" in row["detail"] for row in rows), rows
    assert _board(robot) == before
    assert camera.is_open  # the check read a frame and left the panel's camera open
    assert not any(row["detail"].startswith("SIMULATED") for row in rows)


def test_on_the_simulated_robot_every_row_says_simulated(held):
    robot, camera = held
    rows = doctor_api.checks(robot.config, DoctorContext(link=robot.link, camera=camera, simulated=True))
    assert all(row["detail"].startswith("SIMULATED | ") and row["simulated"] for row in rows)
    rows_by = _by_title(rows)
    assert rows_by["camera"]["item"] == "simulated webcam"
    assert "a simulated run uses the rendered camera's regions" in rows_by["regions file"]["detail"]


def test_without_a_link_or_camera_nothing_is_opened(monkeypatch):
    """A panel that holds no robot: the ports are not probed and no port is opened (either resets an Uno)."""
    from robot.link import driver, ports

    def refuse(*args, **kwargs):
        raise AssertionError("the panel's doctor opened a port")

    monkeypatch.setattr(ports, "probe", refuse)
    monkeypatch.setattr(driver.Link, "open", classmethod(refuse))
    config = config_module.with_settings(config_module.load(), {"link.port": "/dev/ttyACM7"})
    rows = _by_title(doctor_api.checks(config, DoctorContext()))
    for title in ("firmware handshake", "camera", "motors and homing"):
        assert rows[title]["status"] == "info" and "the panel holds no" in rows[title]["detail"]
