"""`cube-robot calibrate colours --puzzle 3x3x3`: the 3x3x3's sticker regions and colours from a solved
cube (robot/vision/regions3.py does the finding, learning and files).

With a solved 3x3x3 in the grippers the robot presents every scan3 view as a run's scan does; per view
the regions are found on the picture (the camera pose fitted to all views' stickers, each region
snapped to its sticker), a picture of them is saved, and the colours are learnt (each face one colour,
named by its centre).  With --sim the simulated 3x3x3 (robot/sim/robot_sim3.py) holds the cube and its
webcam takes the pictures; a scrambled virtual cube is then read with what was learnt, and nothing is
saved unless it reads exactly.  --solved-images reads pictures (<view>.png) instead of a robot.  The
files are scan3.regions_file and scan3.colours_file (or --regions-out / --colours-out), never the
2x2x2's and never a file this command did not write.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..config_types import Config

# Options of the 2x2x2's guided calibration that the 3x3x3's does not take (it asks nothing).
NOT_TAKEN = {"answers": "--answers", "yes": "--yes", "scrambled_images": "--scrambled-images", "port": "--port",
             "no_robot": "--no-robot"}


@dataclass
class Outcome3:
    regions: object
    calibration: object
    names: dict
    pictures: list
    regions_path: Path | None = None
    colours_path: Path | None = None
    checked: str = "no check"
    warnings: list = field(default_factory=list)


def present_views(robot, sequence, tell) -> dict:
    """Each scan3 view presented by the simulated robot (its ops streamed to its firmware, then a frame, as a
    run's scan), then the finish ops (every gripper back to 0): {view name: frame}."""
    robot.start()
    camera = robot.camera
    camera.open()
    frames = {}
    for number, view in enumerate(sequence.views, start=1):
        camera.note_state()
        camera.motion_started = time.perf_counter()
        if view.ops:
            robot.do_ops(view.ops)
        camera.motion_ended()
        frames[view.name] = camera.capture(view.name)
        tell(f"view {number} of {len(sequence.views)} ({view.name}): presented "
             f"({', '.join(_op_words(op) for op in view.ops) or 'as the cube stands'}), picture taken")
    if sequence.finish:
        robot.do_ops(sequence.finish)
    camera.note_state()
    return frames


def _op_words(op: dict) -> str:
    arms = op["arms"]
    if op["op"] in ("open", "close"):
        return f"{op['op']} {''.join(arms)}"
    return f"{op['op']} " + " ".join(f"{arm}{angle:+d}" for arm, angle in arms.items())


def calibrate3(config: Config, frames: dict, tell, pictures_dir, regions_out=None, colours_out=None,
               simulated: bool = False, camera_settings: dict | None = None, check=None) -> Outcome3:
    """Regions and colours from a solved cube's pictures of every scan3 view, checked, then saved.

    check(regions, calibration) -> str: a check read with them (e.g. a scrambled simulated cube), run
    before anything is saved; it raises Calibration3Error when the check fails.  Raises
    Calibration3Error naming the view and sticker when a region is not found or a face is not one colour.
    """
    from ..config import project_path
    from ..scan_sequence3 import ScanSequence3
    from ..vision.calibrate import advice, separations
    from ..vision.camera_geometry3 import pose3
    from ..vision.regions3 import (Calibration3Error, check_writable3, find_regions3, learn_colours3, pictures3,
                                   read3, save_colours3, save_regions3)

    sequence = ScanSequence3.from_config(config)
    regions_path = Path(regions_out) if regions_out else project_path(config.scan3.regions_file)
    colours_path = Path(colours_out) if colours_out else project_path(config.scan3.colours_file)
    own_2x2x2 = {project_path(config.scan.regions_file).resolve(), project_path(config.scan.colours_file).resolve()}
    for path in (regions_path, colours_path):
        if path.resolve() in own_2x2x2:
            raise Calibration3Error(f"{path} is the 2x2x2's (scan.regions_file / scan.colours_file): the 3x3x3's "
                                    "regions and colours go to files of their own; nothing was written")
    check_writable3(regions_path, colours_path)  # said before the robot's work, not after it

    found = find_regions3(frames, sequence, pose3(config))
    tell(f"camera pose fitted to the stickers of all {len(found.views)} views: {found.fitted}")
    for view in found.views:
        tell(f"  {view.name}: {view.found} of {len(view.facelets)} stickers found"
             + (f" (NOT found: {' '.join(view.missing)})" if view.missing else "")
             + f"; regions moved up to {view.moved_px:.1f} px from camera.pose's guess")
    pictures = pictures3(frames, found, pictures_dir, config.scan.sampling.inner_fraction)
    tell(f"pictures of the regions found: {pictures[0]} (all views), {pictures_dir}/regions3-<view>.png (each)")
    refusal = found.refusal()
    if refusal is not None:
        raise refusal
    regions = found.regions("detected (SIMULATED)" if simulated else "detected")
    readings = read3(frames, sequence, regions, config.scan.sampling)
    calibration, names = learn_colours3(readings, sequence, config)
    calibration.camera = dict(camera_settings or {})
    for letter, (name, stats) in zip("URFDLB", calibration.colours.items()):
        tell(f"  {letter}: {name:>8}  Lab {np.round(stats.lab, 1).tolist()}  sigma {np.round(stats.sigma, 1).tolist()}"
             f"  ({stats.samples} readings)")
    outcome = Outcome3(regions, calibration, names, pictures)
    for pair in separations(calibration):
        if pair.too_close:
            text = (f"{pair.first} and {pair.second} are close ({pair.delta_e:.1f} Delta-E, "
                    f"{pair.ratio:.1f} x their spread): {advice(pair)}")
            outcome.warnings.append(text)
            tell("WARNING: " + text)
    if check is not None:
        outcome.checked = check(regions, calibration)
        tell(outcome.checked)
    outcome.regions_path = save_regions3(regions, regions_path, simulated)
    outcome.colours_path = save_colours3(calibration, names, colours_path, simulated)
    tell(f"saved {outcome.regions_path} and {outcome.colours_path}"
         + (" (SIMULATED: found on the simulated camera's pictures; a real camera's differ)" if simulated else ""))
    return outcome


def scrambled_check(config: Config, robot_factory, seed: int, tell):
    """check(regions, calibration) for calibrate3: a scrambled virtual 3x3x3 (from seed) presented on a new
    simulated robot and decoded with the learnt regions and colours; anything but its true state refuses."""
    from ..scan_sequence3 import ScanSequence3
    from ..solver3 import cube3
    from ..vision.decode3 import decode3
    from ..vision.readings import VisionError
    from ..vision.regions3 import Calibration3Error, read3, readings54

    def check(regions, calibration) -> str:
        sequence = ScanSequence3.from_config(config)
        start = cube3.to_facelets(cube3.random_state(np.random.default_rng(seed)))
        tell(f"check: a scrambled cube (seed {seed}) in the grippers: {start} (as put in)")
        robot = robot_factory(start)
        try:
            frames = present_views(robot, sequence, lambda text: tell("check: " + text))
            truth = robot.virtual.facelets()
        finally:
            robot.close()
        try:
            decoded = decode3(readings54(read3(frames, sequence, regions, config.scan.sampling)), calibration,
                              config).facelets
        except VisionError as exc:
            raise Calibration3Error(f"check: the scrambled cube (seed {seed}) could not be read with the new "
                                    f"regions and colours ({exc}); nothing saved") from None
        named = faces_by_centres(truth)
        if decoded != named:
            wrong = [f"{'URFDLB'[i // 9]}{i % 9 + 1}" for i in range(54) if decoded[i] != named[i]]
            raise Calibration3Error(f"check: the scrambled cube (seed {seed}) was read wrong at {' '.join(wrong)} "
                                    f"(read {decoded}, is {named}); nothing saved")
        return f"check: the scrambled cube (seed {seed}) read exactly with the new regions and colours"
    return check


def faces_by_centres(facelets: str) -> str:
    """True colours renamed after the face whose centre has them (how decode3 names a scan's colours)."""
    from ..run.report3 import by_centres

    return by_centres(facelets, facelets)


def command3(config: Config, args) -> int:
    """`calibrate colours --puzzle 3x3x3`: refuses what it cannot take by name, else calibrates."""
    from ..cli_common import simulated
    from ..exit_status import ExitStatus
    from ..sim.emulator import EmulatorError
    from ..vision.camera import CameraError, FileCamera
    from ..vision.colour import CalibrationError
    from ..vision.regions import RegionsError
    from ..vision.regions3 import Calibration3Error

    mark = simulated if args.sim else (lambda text: text)

    def tell(text):
        print(mark(text))
    given = [flag for name, flag in NOT_TAKEN.items() if getattr(args, name, None)]
    if args.sim and args.solved_images:
        given.append("--solved-images (with --sim the simulated camera takes the pictures)")
    if not args.sim and not args.solved_images:
        given.append("(no --sim): the 3x3x3 runs only on the simulated robot so far: add --sim, or give "
                     "--solved-images DIR (a solved cube's <view>.png for every scan3 view)")
    if given:
        print(mark(f"cube-robot calibrate colours --puzzle 3x3x3: cannot take {'; '.join(given)} "
                   "(nothing moved, nothing written)"), file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    from ..config import project_path
    from ..scan_sequence3 import Scan3ConfigError, ScanSequence3

    pictures_dir = project_path(config.scan.preview_dir)
    try:
        sequence = ScanSequence3.from_config(config)
        if args.sim:
            outcome = _simulated(config, args, sequence, tell, pictures_dir)
        else:
            camera = FileCamera(args.solved_images).open()
            frames = {view.name: camera.capture(view.name) for view in sequence.views}
            tell(f"the solved cube's pictures of {len(frames)} views from {args.solved_images}")
            outcome = calibrate3(config, frames, tell, pictures_dir, args.regions_out, args.colours_out,
                                 camera_settings={"camera": f"pictures in {args.solved_images}"})
    except (Calibration3Error, RegionsError, CalibrationError, CameraError, Scan3ConfigError, EmulatorError) as exc:
        print(mark(f"cube-robot calibrate colours --puzzle 3x3x3: {exc}"), file=sys.stderr)
        return ExitStatus.NOT_DONE
    tell(f"3x3x3 calibration done ({outcome.checked}; {len(outcome.warnings)} warning(s))")
    return ExitStatus.OK


def _simulated(config: Config, args, sequence, tell, pictures_dir) -> Outcome3:
    from ..sim.robot_sim3 import SimulatedRobot3
    from ..solver3 import cube3

    firmware = args.firmware  # auto: the real firmware in simavr when it builds, else the mock's 3x3x3 mode
    rng = np.random.default_rng(args.seed)
    seed = int(rng.integers(1 << 30))

    def robot_for(facelets: str) -> SimulatedRobot3:
        return SimulatedRobot3(config, facelets, seed=seed, firmware=firmware)
    robot = robot_for(cube3.SOLVED_FACELETS)
    try:
        tell(f"the simulated robot ({robot.backend}) holds a solved 3x3x3 and presents the "
             f"{len(sequence.views)} views of scan3.views to the simulated webcam")
        frames = present_views(robot, sequence, tell)
        settings = robot.camera.settings()
    finally:
        robot.close()
    check = scrambled_check(config, robot_for, int(rng.integers(1 << 30)), tell)
    return calibrate3(config, frames, tell, pictures_dir, args.regions_out, args.colours_out, simulated=True,
                      camera_settings=settings, check=check)
