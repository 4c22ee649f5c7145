"""What one run was asked to do: the `cube-robot run` options as a small dataclass."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class RunOptions:
    sim: bool = False  # the simulated robot even if one is attached
    port: str | None = None  # the robot's serial port (default: link.port, else auto-detect)
    verify: bool = True  # re-scan after solving (also needs run.verify_after)
    json: bool = False  # print the report as one JSON object
    arms_straight: bool = False  # the user confirms the arms stand straight (robots without homing sensors)
    # Simulation only (robot/sim/robot_sim.py):
    scramble: str | None = None  # scramble the virtual cube with these moves (default: random)
    seed: int | None = None  # random scramble, images and serial faults
    firmware: str = "auto"  # "emulator" (real firmware in simavr), "mock", or "auto"
    realtime: bool = False
    fault_rate: float = 0.0  # corrupt/drop/duplicate/delay serial bytes with this probability
    disconnect_at: int | None = None  # pull the cable at plan action N
    estop_at: int | None = None  # press e-stop during plan action N
    bad_scan: str | None = None  # "dark" or "glare": the first scan gets a bad picture
    light: str | None = None  # a lamp preset (robot/sim/lamp.py) on every scan; None: config camera.lighting
    keep_power: bool = False  # a pulled cable does not reset the board on reconnect (an Uno does)
    robot_kept: bool = False  # the robot outlives the run (the panel holds it): advice names the panel's buttons
    resume: bool = False  # after a reset cut a move and the user squared the layer: clear that alarm, run

    @classmethod
    def from_args(cls, args) -> "RunOptions":
        """From the parsed `cube-robot run` arguments."""
        return cls(sim=args.sim, port=args.port, verify=not args.no_verify, json=args.json,
                   scramble=args.scramble, seed=args.seed, firmware=args.firmware, realtime=args.realtime,
                   fault_rate=args.fault_rate, disconnect_at=args.disconnect_at, estop_at=args.estop_at,
                   bad_scan=args.bad_scan, keep_power=args.keep_power, arms_straight=args.arms_straight,
                   resume=args.resume, light=args.light)

    def simulation_flags(self) -> list[str]:
        """The simulation-only options given (each makes sense only for the virtual robot)."""
        return [flag for flag, value in (("--scramble", self.scramble), ("--fault-rate", self.fault_rate),
                ("--disconnect-at", self.disconnect_at), ("--estop-at", self.estop_at),
                ("--bad-scan", self.bad_scan), ("--realtime", self.realtime), ("--keep-power", self.keep_power),
                ("--light", self.light))
                if value]

    def replace(self, **changes) -> "RunOptions":
        return dataclasses.replace(self, **changes)
