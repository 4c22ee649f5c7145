"""The simulated 3x3x3 robot (SIMULATED): the virtual 3x3x3 on the four arms (virtual_robot3.py), its
webcam (webcam3.py: the 2x2x2's frame timing, render3's pictures) and a firmware in 3x3x3 mode that the
host's link (robot/link/reset3.py Link3, `PUZZLE 3` at every connect) streams robot/plan3.py ops to as lines.

The firmware is picked as the 2x2x2 run picks it (robot/sim/robot_sim.py): the real firmware in simavr when
the AVR toolchain is there (`auto`, `emulator`), else the Python mock firmware's 3x3x3 mode
(robot/sim/mock_puzzle3.py; `mock`).  The virtual 3x3x3 moves only by what that firmware did: the
emulator's servo and step pins (pins3.py), or the actions the mock reports done (its `executed` list).
Optionally a fault proxy (robot/sim/fault_proxy.py) sits between the link and the board, as in the 2x2x2
run: serial byte faults at `fault_rate`, the cable pulled at plan op `disconnect_at` (the board resets when
the host opens the port again, as an Uno does, unless keep_power).  The backend line says which robot ran.

    robot = SimulatedRobot3(config, facelets, seed=1).start()   # facelets: 54, the true colours (cube3 layout)
    robot.do_ops([{"op": "turn", "arms": {"R": 90}}])           # virtual_robot3.Jam3 / link errors raise
    frame = robot.camera.capture("view1")
"""

from __future__ import annotations

import copy
from concurrent.futures import Future
from dataclasses import replace
from typing import TYPE_CHECKING, Callable

from ..config_types import Config
from ..link import protocol as P
from ..link.errors import (DisconnectedError, HandshakeError, LineNumberingError, PortError, RefusedMidStreamError,
                           SilentBoardError, TooManyResendsError)
from ..plan3 import Robot3Profile
from ..solver3 import cube3
from ..vision.camera_geometry3 import pose3
from ..vision.grabber import RealClock
from . import emulator as emulator_module
from . import render
from .robot_sim import BAD_LIGHTING, FIRMWARE_CHOICES, stop_each
from .virtual_robot import MechanicalError
from .virtual_robot3 import Jam3, VirtualRobot3
from .webcam3 import SimulatedCamera3

if TYPE_CHECKING:
    from ..link.reset3 import Link3
    from .emulator import Emulator
    from .fault_proxy import FaultProxy
    from .mock_firmware import MockFirmware

# Errors after which the board may have gone on with what it had queued (the host lost sight of it).
MAY_RUN_ON = (DisconnectedError, SilentBoardError, RefusedMidStreamError, LineNumberingError, PortError,
              HandshakeError)
SPED_UP = 0.02  # the mock firmware's time scale without --realtime (the 2x2x2 run's)
EMULATOR3 = ("SIMULATED 3x3x3: the real firmware (.elf) in simavr, 3x3x3 mode (plan3 ops streamed as lines by the "
             "host's link); the virtual 3x3x3 moved only by its servo and step pins")
MOCK3 = ("SIMULATED 3x3x3: the Python mock firmware, 3x3x3 mode (plan3 ops streamed as lines by the host's link); "
         "the virtual 3x3x3 moved only by the actions it reports done")


def command_op(command: str) -> dict | None:
    """A 3x3x3 action line -> its plan3 op (None: not a plan op, e.g. DWELL)."""
    words = command.split()
    if words and words[0] in ("OPEN", "CLOSE"):
        return {"op": words[0].lower(), "arms": list(words[1])}
    if words and words[0] in ("TURN", "TILT"):
        return {"op": words[0].lower(), "arms": {word[0]: int(word[1:]) for word in words[1:]}}
    return None


class SimulatedRobot3:
    """The virtual 3x3x3 on four arms, its camera and a firmware in 3x3x3 mode behind the host's link."""

    def __init__(self, config: Config, facelets: str, seed: int = 0, realtime: bool = False,
                 time_scale: float | None = None, bad_scan: str | None = None, clock=RealClock,
                 firmware: str = "auto", fault_rate: float = 0.0, disconnect_at: int | None = None,
                 keep_power: bool = False, say: Callable[[str], None] | None = None, light: str | None = None):
        if firmware not in FIRMWARE_CHOICES:
            raise ValueError(f"firmware must be one of {FIRMWARE_CHOICES}, not {firmware!r}")
        if bad_scan is not None and bad_scan not in BAD_LIGHTING:
            raise ValueError(f"bad_scan must be one of {tuple(BAD_LIGHTING)}, not {bad_scan!r}")
        self.config, self.clock, self.bad_scan, self.seed = config, clock, bad_scan, seed
        self.realtime, self.keep_power, self.say = realtime, keep_power, say or (lambda text: None)
        self.light = light  # a lamp preset (robot/sim/lamp.py) for the camera (webcam3 reads it); None: config's
        self.profile = Robot3Profile.from_config(config)
        self.time_scale = time_scale if time_scale is not None else (1.0 if realtime else SPED_UP)
        usable, reason = emulator_module.available()
        if firmware == "emulator" and not usable:
            raise emulator_module.EmulatorError(f"the firmware emulator is not available: {reason}")
        self.uses_emulator = firmware == "emulator" or (firmware == "auto" and usable)
        self.backend = EMULATOR3 if self.uses_emulator else MOCK3 + ("" if firmware == "mock" else f" ({reason})")
        # Pulling the cable needs the fault proxy in the line, even with no other faults (as the 2x2x2's).
        self.fault_rate = fault_rate if fault_rate else (1e-9 if disconnect_at else 0.0)
        self.disconnect_at = disconnect_at
        self.disconnected = False  # the cable was pulled (disconnect_at)
        self.resumes = 0  # streams resumed after a lost link
        self.emu: Emulator | None = None
        self.mock: MockFirmware | None = None
        self.proxy: FaultProxy | None = None
        self.link: Link3 | None = None
        self.virtual = VirtualRobot3(self.profile, facelets, steps_per_rev=config.motion.steps_per_rev)
        # What the host knows for certain: the ops the board reported done, and the arms they left (the
        # grippers and angles of a VirtualRobot3 moved by those ops; its stickers mean nothing).
        self.done_ops: list = []
        self.belief = VirtualRobot3(self.profile, cube3.to_facelets(cube3.solved()),
                                    steps_per_rev=config.motion.steps_per_rev)
        self.maybe_ops: list = []  # after a link error: the stream's ops past done_ops that may have run
        self._stream_ops: list = []
        self._stream_base: VirtualRobot3 = self.belief
        self._stream_start = 0  # len(done_ops) when the stream began
        self.jam: Jam3 | None = None  # the first jam the virtual robot saw (it is not moved after it)
        self.jam_after = 0  # len(done_ops) at the last sync before the jam
        self._executed = 0  # mock: executed entries applied
        self.synced_cycle = 0  # emulator: pin events applied up to this cycle
        self._prerendered: Future | None = None  # the last prerender's future
        self.last_done_at: float | None = None  # the clock when do_ops' last `done` arrived
        self.camera = SimulatedCamera3(self, pose3(config), seed, clock)

    # -- life cycle ---------------------------------------------------------------

    def start(self) -> "SimulatedRobot3":
        """The board (every arm closed at 0, as a plan starts) and the link.  Idempotent."""
        if self.link is not None:
            return self
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def _start(self) -> None:
        from ..link import ports
        from ..link.handshake import LinkSettings
        from ..link.reset3 import Link3

        if self.uses_emulator:
            self.emu = emulator_module.Emulator(realtime=self.realtime).start()
            url = self.emu.port
        else:
            from .mock_firmware import MockFirmware

            self.mock = MockFirmware(transport="pty", motion=self.config.motion, time_scale=self.time_scale).start()
            url = self.mock.url
        assert url is not None
        if self.fault_rate:
            from .fault_proxy import FaultProxy

            resets = not self.keep_power  # an Uno resets when its port is opened again
            self.proxy = FaultProxy(url, rate=self.fault_rate, seed=self.seed,
                                    reopen_device=resets and self.uses_emulator,
                                    on_host_connect=self._reset_mock if resets and self.mock else None).start()
            url = self.proxy.url
        settings = LinkSettings.from_config(self.config)
        link = self.link = Link3(ports.open_port(url, settings.baud), settings, motion=self.config.motion, url=url,
                                 puzzle="3x3x3")
        if self.mock is not None:
            link.work_time_scale = self.time_scale  # the mock's actions run this much faster
        link.reconnect_log = self.say
        link.handshake()
        link.configure()
        link.request("ZERO " + "".join(P.ARMS))  # the arms start square at 0 (the simulation put them so)
        link.run([P.grippers_command(P.ARMS, True)])
        self.sync()
        link.arms_after_reset = self._arms_after_reset  # from now on a reset is answered from what the host knows

    def _reset_mock(self) -> None:
        if self.proxy is not None and self.proxy.connections > 1 and self.mock is not None:
            self.mock.reset()  # reopened: an Uno resets (the first open is the power-on)

    def close(self) -> None:
        try:
            self.sync()  # the virtual cube as the firmware left it (reports compare claims with it)
        except Exception:  # e.g. a board that died: what was synced stands
            pass
        stop_each(self.camera.close, self.link and self.link.close, self.proxy and self.proxy.stop,
                  self.emu and self.emu.close, self.mock and self.mock.stop)
        self.link = None

    # -- the ops ----------------------------------------------------------------

    def do_ops(self, ops, on_done: Callable[[int], None] | None = None,
               on_sent: Callable[[], None] | None = None) -> list:
        """Stream plan3 ops to the board and wait for every `done`; a lost link is resumed once (the board
        may reset: robot/link/reset3.py).  on_done(n): n ops of these done; on_sent(): the first op went to
        the board (at once when there is none).  Returns each op's measured ms (None where its `done` was
        lost); last_done_at: the host's clock when the last `done` arrived (before the virtual robot
        follows the pins: the simulation's CPU, not the robot's time).  Raises the link's errors (done_ops
        and maybe_ops then say what ran) or a Jam3 the virtual robot saw (jam_after: the ops done before it)."""
        from ..link.errors import LinkError

        link = self.link
        assert link is not None, "start() first"
        ops = list(ops)
        if not ops:
            if on_sent is not None:
                on_sent()
            return []
        first_sent = (lambda n: on_sent() if n == 1 else None) if on_sent is not None else None
        self._stream_ops, self._stream_base, self._stream_start = ops, copy.deepcopy(self.belief), len(self.done_ops)
        self.maybe_ops = []

        def progress(p) -> None:
            self._confirm(p.completed)
            if self.mock is not None:  # its record holds whole actions; the pins, also the one under way
                self.sync()
            if on_done is not None:
                on_done(p.completed)

        try:
            try:
                result = link.run([P.plan3_command(op) for op in ops], progress=progress, sent=first_sent)
            except (DisconnectedError, SilentBoardError) as exc:
                self.say(f"The link was lost ({type(exc).__name__}: {exc}); reconnecting")
                result = link.resume()
                self.resumes += 1
                self.say("The link was resumed: the stream went on from the board's own record of what it did")
        except LinkError as exc:
            self._after_error(exc)
            self.sync()
            if self.jam is not None:
                raise self.jam from exc
            raise
        self.last_done_at = self.clock.now()
        self._confirm(len(ops))
        self.sync()
        if self.jam is not None:
            raise self.jam
        return list(result.durations_ms)

    def _confirm(self, completed: int) -> None:
        """The stream's first `completed` ops are done (the board said so): the host's knowledge follows."""
        for op in self._stream_ops[len(self.done_ops) - self._stream_start:completed]:
            self.belief.apply_op(op)
            self.done_ops.append(op)

    def _after_error(self, exc) -> None:
        """What a link error's progress says ran: done_ops only as far as it confirms, maybe_ops after."""
        from ..link.errors import CommandRejectedError
        from ..link.reset3 import ArmAcrossAfterResetError

        progress = exc.progress
        completed = progress.completed if progress is not None else len(self.done_ops) - self._stream_start
        self.done_ops = self.done_ops[:self._stream_start]
        self.belief = copy.deepcopy(self._stream_base)
        self._confirm(completed)
        rest = self._stream_ops[completed:]
        if isinstance(exc, (CommandRejectedError, ArmAcrossAfterResetError)):
            self.maybe_ops = []  # refused: it did nothing, and nothing after it was sent
        elif (progress is not None and not progress.unknown_after and not progress.ran_after
              and progress.interrupted is None and not isinstance(exc, MAY_RUN_ON)):
            self.maybe_ops = []  # the board was idle and said which ran
        elif (progress is not None and progress.interrupted is not None and not progress.unknown_after
              and not progress.ran_after and not isinstance(exc, (TooManyResendsError, *MAY_RUN_ON))):
            self.maybe_ops = rest[:1]  # the next one may have run, part-way or whole
        else:
            self.maybe_ops = rest  # those sent may have run (a lost link: the board works on)

    def _arms_after_reset(self, progress) -> dict | str:
        """Where every arm stands after the current stream's completed ops (robot/link/reset3.py)."""
        if progress is not None and (progress.unknown_after or progress.ran_after):
            return "which of the stream's actions ran is not known"
        if progress is not None and len(progress.commands) == len(self._stream_ops):
            belief = copy.deepcopy(self._stream_base)
            try:
                for op in self._stream_ops[:progress.completed]:
                    belief.apply_op(op)
            except MechanicalError as exc:
                return f"the ops the board reported done do not add up on the arms: {exc}"
        else:
            belief = self.belief
        return {arm: (belief.gripper_angle(arm), bool(belief.closed[arm])) for arm in P.ARMS}

    def restore_after_reset(self) -> list:
        """After a reset that left the board not knowing its arms while a gripper stood at 90 (reset3.py
        ArmAcrossAfterResetError; the cube state and every arm are known: the reset came between actions): every
        arm at 0 is zeroed and closed, then each pair's grippers at 90 open, turn back a quarter in the air
        (JOG), are zeroed and close, a pair at a time while the other pair holds the cube.  Every arm then
        stands closed at 0, as a plan starts.  Returns those motions as plan3 ops (in done_ops; no layer turns).
        Raises the link's errors, a Jam3, or ArmsNotKnownError when the host is not sure or no pair would hold."""
        from ..link.reset3 import ArmsNotKnownError

        link, belief = self.link, self.belief
        assert link is not None, "start() first"
        angle = {arm: belief.gripper_angle(arm) for arm in P.ARMS}
        if any(value not in (0, 90) for value in angle.values()):
            raise ArmsNotKnownError(f"an arm stands between quarter positions ({angle}): nothing is moved")
        at_0 = "".join(arm for arm in P.ARMS if angle[arm] == 0)
        ops: list = []
        if at_0:
            link.request(f"ZERO {at_0}")
            link.run([P.grippers_command(at_0, True)])  # those open at 0 close on the cube; the rest stay closed
            ops.append({"op": "close", "arms": list(at_0)})
        closed = {arm: bool(belief.closed[arm]) or arm in at_0 for arm in P.ARMS}
        pending = [[arm for arm in faces if angle[arm] == 90] for _, faces in self.profile.pairs]
        pending = [arms for arms in pending if arms]
        quarter = self.config.motion.steps_per_rev // 4
        while pending:
            k = next((i for i, arms in enumerate(pending) if all(closed[a] for a in self.virtual.other_arms(arms[0]))),
                     None)
            if k is None:
                raise ArmsNotKnownError("no pair would hold the cube while a gripper at 90 turns back: nothing more "
                                        "is moved")
            arms = "".join(pending.pop(k))
            link.run([P.grippers_command(arms, False)] + [P.jog_command(arm, -quarter) for arm in arms])
            link.request(f"ZERO {arms}")
            link.run([P.grippers_command(arms, True)])
            closed.update({arm: True for arm in arms})
            ops += [{"op": "open", "arms": list(arms)}, {"op": "turn", "arms": {arm: -90 for arm in arms}},
                    {"op": "close", "arms": list(arms)}]
        for op in ops:
            self.belief.apply_op(op)
            self.done_ops.append(op)
        self.sync()
        if self.jam is not None:
            raise self.jam
        return ops

    def plan_op_done(self, completed: int) -> None:
        """Pull the cable (disconnect_at) when plan op N starts: once op N-1 is done."""
        if self.disconnect_at and not self.disconnected and completed >= self.disconnect_at - 1:
            self.disconnected = True
            assert self.proxy is not None  # disconnect_at puts it in the line
            self.proxy.disconnect_now()

    def press_estop(self) -> None:
        """The e-stop input (the board latches ESTOP_INPUT)."""
        if self.emu is not None:
            self.emu.press("estop")
        elif self.mock is not None:
            self.mock.estop_input()

    def serial_fault_counts(self) -> int:
        return len(self.proxy.faults) if self.proxy is not None else 0

    # -- the virtual robot follows the firmware ------------------------------------

    def sync(self) -> None:
        """Apply what the firmware did since the last sync to the virtual 3x3x3 (the camera's, the run's).  A
        jam is kept in `jam` (do_ops raises it); after it the virtual robot is not moved again: its facelets are
        what they were when it jammed."""
        try:
            self._follow_firmware()
        except Jam3 as jam:
            self.jam = jam
            return
        if self.jam is None:
            self.jam_after = len(self.done_ops)

    def _follow_firmware(self) -> None:
        if self.jam is not None:
            return
        if self.emu is not None:
            from . import pins3

            events, until = self.emu.pin_events(), self.emu.cycle()
            try:
                pins3.replay(self.virtual, events, self.config.motion, self.synced_cycle)
            finally:
                self.synced_cycle = until
        elif self.mock is not None:
            executed = self.mock.executed
            while self._executed < len(executed):
                _, command = executed[self._executed]
                self._executed += 1
                op = command_op(command)
                if op is not None:
                    self.virtual.apply_op(op)
                elif command.startswith("JOG "):  # an arm turned in the air (restore_after_reset)
                    _, arm, steps = command.split()
                    self.virtual.turn_arm(arm, int(steps))

    # -- the camera ---------------------------------------------------------------

    def before_scan(self, attempt: int | None) -> None:
        """bad_scan spoils the first scan's picture only."""
        bad = self.bad_scan if attempt == 1 else None
        self.camera.lighting = replace(render.Lighting(), **BAD_LIGHTING[bad]) if bad else render.Lighting()

    def prerender_scan(self, sequence, before=()) -> None:
        """Render the pictures of a scan's views ahead (after the ops `before`, then each view's ops), on the
        camera's prerender thread, to keep the renderer's CPU time off the camera's clock as the 2x2x2's
        webcam does while its arms move.  Only a cache, guessed from the virtual robot: a wrong guess is not
        used, and one that would jam stops guessing."""
        from concurrent.futures import ThreadPoolExecutor

        from . import render_arms

        camera = self.camera
        rehearsal = copy.deepcopy(self.virtual)
        states = []
        try:
            for op in list(before):
                rehearsal.apply_op(op)
            for view in sequence.views:
                for op in view.ops:
                    rehearsal.apply_op(op)
                states.append((rehearsal.facelets(), render_arms.arms_of(rehearsal, camera.arms_geometry)))
        except MechanicalError:
            pass
        if camera._prerenderer is None:
            camera._prerenderer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sim-prerender")
        for facelets, arms in states:
            self._prerendered = camera._prerenderer.submit(camera._clean, facelets, camera.lighting, arms)

    def prerender_wait(self) -> None:
        """Until the pictures asked for so far are rendered (before the start press: the simulation's time)."""
        if self._prerendered is not None:
            self._prerendered.result()

