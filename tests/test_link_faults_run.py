"""Whole simulated runs with a pulled cable: the board resets on reconnect (as a real Uno does)."""

import pytest

from robot import config as config_module
from robot.run.options import RunOptions
from robot.run.simulated import run_simulated
from robot.sim import emulator

from benches import load_bench


def _run(**options):
    config = config_module.defaults()
    return run_simulated(config, RunOptions(sim=True, seed=3, **options), tell_maker=lambda *a, **k: None)


def test_pulled_cable_resets_the_mock_board_and_the_run_resumes_without_losing_a_move():
    report = _run(firmware="mock", disconnect_at=5)
    assert report.link_stats["board_resets"] == 1  # the banner after reconnecting was seen
    assert report.solved and report.virtual_cube == report.final_state
    assert any(e.startswith("recovered") for e in report.errors)


def test_keep_power_does_not_reset_the_board():
    report = _run(firmware="mock", disconnect_at=5, keep_power=True)
    assert report.solved
    assert report.link_stats.get("board_resets", 0) == 0


@pytest.mark.firmware
@pytest.mark.skipif(not emulator.available()[0], reason="the firmware emulator is not available")
def test_pulled_cable_resets_the_emulated_board_between_moves():
    report = _run(firmware="emulator", disconnect_at=5)
    assert report.link_stats["board_resets"] == 1
    assert report.link_stats["reopen_wait_ms"] > 0  # reopened only once the queued actions had ended
    assert report.solved and report.virtual_cube == report.final_state


def _wait_until_idle(mock, timeout_s: float = 60.0) -> None:
    """Until the mock board has nothing received, queued or running (asked on its own thread)."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        answer = []
        mock.call(lambda: answer.append(mock._running is None and not mock._queue and not mock._rx))
        if answer == [True]:
            return
        assert time.monotonic() < deadline, f"the mock board was still busy after {timeout_s} s"
        time.sleep(0.01)  # polls the board's state, which changes on its own clock


def test_a_port_that_does_not_come_back_stops_with_exact_progress_after_the_window():
    import time

    from robot.link import ports
    from robot.link.driver import Link, LinkSettings
    from robot.link.errors import DisconnectedError, PortError
    from robot.sim.fault_proxy import TO_HOST, FaultProxy
    from robot.sim.mock_firmware import DEFAULT_MOTION, MockFirmware
    from tests.test_link_driver import COMMANDS, PLAN, SCALE

    settings = LinkSettings(ack_timeout_s=0.05, silence_timeout_s=0.3, handshake_timeout_s=1.0,
                            reconnect_window_s=0.6)
    with MockFirmware("tcp", time_scale=SCALE) as mock:
        proxy = FaultProxy(mock.url, rate=0.0).start()
        link = Link(ports.open_port(proxy.url, 115200), settings, motion=DEFAULT_MOTION, url=proxy.url)
        link.handshake()
        link.configure()
        link.work_time_scale = SCALE
        messages = []
        link.reconnect_log = messages.append
        proxy.disconnect_after(120, TO_HOST)
        with pytest.raises(DisconnectedError):
            link.run(PLAN)
        proxy.stop()  # the port is gone for good
        started = time.monotonic()
        with pytest.raises(PortError, match="did not come back within") as info:
            link.resume()
        assert time.monotonic() - started >= settings.reconnect_window_s  # it waited the window
        assert any("to come back" in m for m in messages)  # and said so while waiting
        _wait_until_idle(mock)  # the board finishes what was queued: then compare with what it did
        executed = [command.strip() for _, command in mock.executed]
    progress = info.value.progress
    assert progress is not None
    # The stop names the actions known to be done; the board may have finished more after the pull
    # (their `done` never arrived): those are named as possibly cut, never as done.
    assert executed[:progress.completed] == COMMANDS[:progress.completed]
    assert progress.completed <= len(executed)
    if progress.completed < len(executed):
        assert progress.interrupted == progress.completed


@pytest.mark.firmware
@pytest.mark.skipif(not emulator.available()[0], reason="the firmware emulator is not available")
def test_a_reset_keeps_the_holding_grippers_closed():
    """Out of a reset the grippers that held the cube get closed pulses at once; the others stay limp."""
    from robot.link.driver import Link
    from robot.sim import pinlog

    config = config_module.defaults()
    closed, opened = config.motion.servo_closed_us, config.motion.servo_open_us
    with emulator.Emulator() as emu:
        link = Link.open(config, port=emu.port)
        try:
            link.run(["GRIP RL", "DWELL 50"])
            mark = emu.reset()
            link.status()  # the firmware is running again (and its pin log written out)
            after = {arm: [p for p in pulses if p.start_cycle > mark]
                     for arm, pulses in pinlog.servo_pulses(emu.pin_events()).items()}
        finally:
            link.close()
    for arm in "RL":
        assert after[arm], f"gripper {arm} got no pulses after the reset: it would let go"
        assert all(abs(p.width_us - closed) < 20 for p in after[arm]), f"gripper {arm} moved: {after[arm][:3]}"
    for arm in "FB":  # they were open: still no pulse that could close or move them
        assert all(abs(p.width_us - opened) < 20 for p in after[arm])


def test_a_cable_pulled_after_the_last_action_is_resumed_for_the_rescan():
    plain = _run(firmware="mock", scramble="R U F")
    actions = len(plain.plan["plan"])
    report = _run(firmware="mock", scramble="R U F", disconnect_at=actions + 1)  # pulled as the last ends
    assert report.verify == "rescan shows solved" and report.verified_solved
    assert any("during a scan" in e for e in report.errors)
    assert report.solved and report.virtual_cube == report.final_state


def test_a_reset_while_disconnected_names_every_action_the_board_completed():
    """The `done` lines of the actions run while the cable was out are lost; the board's memory
    (`last` in the banner) still names them, and the cut action is named as cut."""
    import time

    from robot.link import ports
    from robot.link.driver import Link, LinkSettings
    from robot.link.errors import CubeStateUncertainError, DisconnectedError
    from robot.sim.fault_proxy import TO_HOST, FaultProxy
    from robot.sim.mock_firmware import DEFAULT_MOTION, MockFirmware
    from tests.test_link_driver import COMMANDS, PLAN

    settings = LinkSettings(ack_timeout_s=0.05, silence_timeout_s=0.3, handshake_timeout_s=1.0)
    with MockFirmware("tcp", time_scale=0.2) as mock, FaultProxy(mock.url, rate=0.0) as proxy:
        link = Link(ports.open_port(proxy.url, 115200), settings, motion=DEFAULT_MOTION, url=proxy.url)
        link.handshake()
        link.configure()
        proxy.disconnect_after(60, TO_HOST)
        with pytest.raises(DisconnectedError) as lost:
            link.run(PLAN)
        known = lost.value.progress.completed
        deadline = time.monotonic() + 20
        while len(mock.executed) < known + 3 and time.monotonic() < deadline:
            time.sleep(0.001)
        mock.reset()  # the board resets while the cable is out, in the middle of an action
        assert mock.interrupted, "the reset did not hit a running action"
        with pytest.raises(CubeStateUncertainError) as info:
            link.resume(ports.open_port(proxy.url, 115200))
        link.close()
    executed = [command.strip() for _, command in mock.executed]
    progress = info.value.progress
    assert progress.completed == len(executed) > known + 2  # all of them, not just those acknowledged
    assert executed == COMMANDS[:progress.completed]
    assert progress.interrupted == progress.completed
    assert mock.interrupted[-1][1].strip() == COMMANDS[progress.interrupted]


def _same_cube(claimed: str, truth: str) -> bool:
    """Equal up to the naming of the colours (the scan names them, the virtual cube by face)."""
    pairs = set(zip(claimed[:24], truth))
    return len(truth) == 24 and len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs})


def test_a_stop_claims_the_cube_state_the_virtual_cube_really_has():
    report = _run(firmware="mock", estop_at=4)
    assert not report.solved and report.cube_state_after_stop
    assert _same_cube(report.cube_state_after_stop, report.virtual_cube), (
        report.cube_state_after_stop, report.virtual_cube)
    assert not _same_cube(report.cube_state_after_stop, "UUUURRRRFFFFDDDDLLLLBBBB") or report.stopped_at_action == 0


@pytest.mark.firmware
@pytest.mark.skipif(not emulator.available()[0], reason="the firmware emulator is not available")
def test_a_reset_whose_banner_was_lost_is_counted_on_the_emulator():
    """board_resets comes from the board's own reset counter (`boots`, .noinit): the DTR reset of a
    reopened port is counted even when its banner never reaches the host (line noise)."""
    import time

    from robot.link import ports
    from robot.link.driver import Link

    config = config_module.defaults()
    with emulator.Emulator() as emu:
        link = Link.open(config, port=emu.port)
        try:
            link.run(["GRIP RL", "DWELL 20"])
            boots = link.boots
            link.connection.detach()
            port = ports.open_port(emu.port, 115200)  # opening resets the board (DTR)
            banner, deadline = b"", time.monotonic() + 10
            while b"\n" not in banner and time.monotonic() < deadline:
                banner += port.read(port.in_waiting or 1)
            assert b"id cube-robot-fw" in banner  # ...and here the banner is lost
            link.connection.identity = None
            link.connection.attach(port)
            identity = link.handshake()  # `?` then HELLO
        finally:
            link.close()
    assert identity.boots == boots + 1
    assert link.stats["board_resets"] == 1


@pytest.mark.firmware
@pytest.mark.skipif(not emulator.available()[0], reason="the firmware emulator is not available")
def test_a_cable_pulled_after_the_last_action_is_resumed_for_the_rescan_on_the_emulator():
    plain = _run(firmware="mock", scramble="R U F")
    actions = len(plain.plan["plan"])
    report = _run(firmware="emulator", scramble="R U F", disconnect_at=actions + 1)
    assert report.link_stats["board_resets"] == 1  # the rescan's stream reopened (and reset) the board
    assert report.verify == "rescan shows solved" and report.verified_solved
    assert any("during a scan" in e for e in report.errors)
    assert report.solved and report.virtual_cube == report.final_state


def test_a_stop_byte_made_by_noise_while_the_settings_go_out_is_cleared_and_the_run_solves(monkeypatch):
    """Line noise made `!` before the scan; nothing was queued, so the link clears it and says so."""
    from robot.link import protocol as P
    from robot.link.driver import Link

    configure = Link.configure
    made = []

    def configure_after_noise(link):
        if not made:  # the first time the settings go out, a byte on the way becomes `!`
            made.append(link.connection.port.write(P.RT_ESTOP))
        configure(link)

    monkeypatch.setattr(Link, "configure", configure_after_noise)
    report = _run(firmware="mock")
    assert made and report.solved, report.errors
    assert report.link_stats["noise_stops_cleared"] == 1
    assert any("line noise made the stop byte '!'" in e for e in report.errors)
    assert not any(e.startswith("recovered") for e in report.errors)  # it was not a lost connection


def test_a_stop_after_a_cleared_noise_stop_byte_is_still_the_reason_the_report_gives(monkeypatch):
    from robot.link import protocol as P
    from robot.link.driver import Link
    from robot.sim.robot_sim import SimulatedRobot

    configure = Link.configure

    def configure_after_noise(link):
        if not link.noise_stops:
            link.connection.port.write(P.RT_ESTOP)
        configure(link)

    monkeypatch.setattr(Link, "configure", configure_after_noise)
    monkeypatch.setattr(SimulatedRobot, "wait_start", lambda robot, timeout_s: False)
    report = _run(firmware="mock")
    assert "line noise made the stop byte" in report.errors[0]
    assert report.result_line().endswith("the start button was not pressed in time")


def test_a_stop_before_the_start_press_claims_the_cube_as_put_in_and_the_bench_checks_it(monkeypatch):
    """A stop that is not noise (here an alarm while the cube is loaded) before the press: no layer has
    turned, so the report names the state (as put in); bench/faults.py counts that claim right only when
    the virtual cube is exactly the cube put in."""
    from robot.link import protocol as P
    from robot.link.errors import AlarmError
    from robot.run.pipeline import CUBE_AS_PUT_IN
    from robot.sim.robot_sim import SimulatedRobot

    def load_stopped(robot):
        raise AlarmError(P.AlarmCode.ESTOP_BYTE)

    monkeypatch.setattr(SimulatedRobot, "load_cube", load_stopped)
    report = _run(firmware="mock")
    assert not report.solved
    assert report.cube_state_after_stop.startswith(CUBE_AS_PUT_IN)
    bench = load_bench("faults")
    as_json = {k: getattr(report, k) for k in ("solved", "cube_state_after_stop", "virtual_cube", "true_state")}
    assert bench.classify(as_json) == "stopped, state right"
    moved = dict(as_json, virtual_cube=as_json["true_state"][1:] + as_json["true_state"][0])
    assert bench.classify(moved) == "stopped, state wrong"  # the claim is checked, not trusted
    # A stop that names no state as the cube's (pipeline CUBE_STATE_NOT_KNOWN) is counted apart, never right.
    from robot.run.pipeline import CUBE_STATE_NOT_KNOWN
    unknown = dict(as_json, cube_state_after_stop=f"{CUBE_STATE_NOT_KNOWN}: {as_json['true_state']} after plan action 2")
    assert bench.classify(unknown) == "stopped, state not known"


def test_a_cable_pulled_while_the_proxy_writes_to_the_board_still_lets_the_host_reconnect():
    """A fault soak's "the board never answered the handshake after a reconnect": the pull (disconnect_now,
    on the run's thread) closed the device port while the proxy's thread was writing to it; pyserial
    then raised TypeError, which killed the proxy's accept thread, so the reconnect reached nobody.
    Here the device write fails that way once: the proxy must drop that connection and accept the next."""
    from robot.link import ports
    from robot.link.driver import Link
    from robot.sim.fault_proxy import FaultProxy
    from robot.sim.mock_firmware import MockFirmware
    from tests.test_link_driver import FAST

    class ClosedUnderUs:
        def __init__(self, port):
            self.port = port

        def write(self, data):
            raise TypeError("'NoneType' object cannot be interpreted as an integer")  # as pyserial does

        def __getattr__(self, name):
            return getattr(self.port, name)

    with MockFirmware("pty") as mock, FaultProxy(mock.url, rate=0.0, reopen_device=True) as proxy:
        link = Link(ports.open_port(proxy.url, FAST.baud), FAST, url=proxy.url)
        link.handshake()
        proxy._device = ClosedUnderUs(proxy._device)
        link.connection.write(b"?")  # the proxy's write fails: that connection is over
        link.close()
        again = Link(ports.open_port(proxy.url, FAST.baud), FAST, url=proxy.url)
        try:
            assert again.handshake().firmware == "cube-robot-fw"  # the proxy accepted and forwarded
        finally:
            again.close()
        assert proxy.connections == 2


def test_a_board_that_does_not_answer_after_the_port_came_back_is_opened_again_within_the_window():
    """The port came back but the board answers nothing (a port that is half-ready): the host opens it
    again (an Uno resets then; the queued actions have ended, so nothing moves), says so, and resumes."""
    import dataclasses

    from robot.link import ports
    from robot.link.driver import Link
    from robot.link.errors import DisconnectedError
    from robot.sim.fault_proxy import TO_HOST, FaultProxy
    from robot.sim.mock_firmware import DEFAULT_MOTION, MockFirmware
    from tests.test_link_driver import COMMANDS, FAST, PLAN, SCALE, executed_commands

    settings = dataclasses.replace(FAST, handshake_timeout_s=0.5, reconnect_window_s=5.0)
    with MockFirmware("tcp", time_scale=SCALE) as mock:
        def silent_on_the_first_reconnect():
            mock.silent = proxy.connections == 2  # the first reconnect: nothing answers; the next: all is well

        proxy = FaultProxy(mock.url, rate=0.0, on_host_connect=silent_on_the_first_reconnect).start()
        try:
            link = Link(ports.open_port(proxy.url, settings.baud), settings, motion=DEFAULT_MOTION, url=proxy.url)
            link.handshake()
            link.configure()
            messages = []
            link.reconnect_log = messages.append
            proxy.disconnect_after(120, TO_HOST)
            with pytest.raises(DisconnectedError):
                link.run(PLAN)
            result = link.resume()
            link.close()
        finally:
            proxy.stop()
    assert proxy.connections == 3 and link.stats["handshake_reopens"] == 1
    assert any("did not answer" in m and "opening it again" in m for m in messages), messages
    assert len(result.durations_ms) == len(PLAN)
    assert [c for c in executed_commands(mock) if c.startswith("TURN")] == [c for c in COMMANDS if c.startswith("TURN")]


def test_no_start_press_stops_with_the_cube_as_put_in(monkeypatch):
    from robot.run.pipeline import CUBE_AS_PUT_IN
    from robot.sim.robot_sim import SimulatedRobot

    monkeypatch.setattr(SimulatedRobot, "wait_start", lambda robot, timeout_s: False)
    report = _run(firmware="mock")
    assert "start button was not pressed" in report.errors[0]
    assert report.cube_state_after_stop.startswith(CUBE_AS_PUT_IN) and report.virtual_cube == report.true_state


@pytest.mark.parametrize("firmware", ["mock", pytest.param("emulator", marks=[
    pytest.mark.firmware,
    pytest.mark.skipif(not emulator.available()[0], reason="the firmware emulator is not available")])])
def test_a_line_resent_before_the_boards_resend_request_is_not_renumbered_into_duplicates(
        monkeypatch, tmp_path, firmware):
    """bench/faults.py 2% seed 20023, replayed: after the resetting reconnect the first command line
    arrived damaged, and the host had resent it before the board's `rs <last+1>` came back.  The board
    (which takes any seq above `last` until its first line) took the resent copy; the host renumbered
    its lines down to last+1, so the board answered the next lines `ok dup` without running them
    (in that run MOTORS ON and three actions: each TURN was then refused MOTORS_OFF) while the host
    counted them done; the stop said actions 1-5 and 7-17 ran, the virtual cube was at action 2."""
    from robot.link import protocol as P
    from robot.link.handshake import Connection
    from robot.link.stream import LineWindow
    from robot.sim import fault_proxy
    from robot.sim.fault_proxy import TO_DEVICE, TO_HOST, LineFault

    replay = [LineFault(TO_DEVICE, 2, rb"^N\d+ ", "corrupt"),  # the first command line after the reconnect
              LineFault(TO_HOST, 2, rb"^rs ", "hold", release_after=1)]  # its `rs` arrives after the resend
    proxy_class = fault_proxy.FaultProxy
    monkeypatch.setattr(fault_proxy, "FaultProxy",
                        lambda *args, **kwargs: proxy_class(*args, line_faults=replay, **kwargs))
    # Exactly once, checked line by line: `ok <seq> dup` means the board already took that seq, so it
    # may only answer a line whose seq went out before (an earlier copy of the same line).
    sent, not_run = {}, []
    mark_sent, apply = LineWindow.mark_sent, Connection._apply

    def record_send(window, line):
        sent.setdefault(line.seq, []).append(line.command)
        mark_sent(window, line)

    def check_dup(link, message):
        if isinstance(message, P.Ok) and message.dup and len(sent.get(message.seq, ())) < 2:
            not_run.append((message.seq, sent.get(message.seq)))  # answered dup: the board never ran it
        apply(link, message)

    monkeypatch.setattr(LineWindow, "mark_sent", record_send)
    monkeypatch.setattr(Connection, "_apply", check_dup)
    config = config_module.with_settings(config_module.defaults(), {
        "link.silence_timeout_ms": 5000,  # the held `rs` (and the `?` answers) wait for the host's resend
        "scan.images_dir": str(tmp_path / "scans")})
    report = run_simulated(config, RunOptions(sim=True, seed=3, firmware=firmware, disconnect_at=2),
                           tell_maker=lambda *a, **k: None)
    assert all(fault.fired for fault in replay), replay  # the sequence really happened
    assert report.link_stats["board_resets"] >= 1
    assert not not_run, f"lines answered `ok dup` that the board never ran: {not_run}"
    assert report.solved and report.virtual_cube == report.final_state, (report.errors, report.link_stats)


def test_what_a_run_prints_after_a_lost_link_is_for_the_maker_not_the_api():
    """The link's DisconnectedError keeps the API call (Link.resume()) in `api_hint`; what the run
    shows says what happened, what to do at the robot and that the run goes on by itself."""
    said = []
    config = config_module.defaults()
    report = run_simulated(config, RunOptions(sim=True, seed=3, firmware="mock", disconnect_at=5),
                           tell_maker=lambda *a, **k: said.append(" ".join(str(x) for x in a)))
    assert report.solved and report.virtual_cube == report.final_state
    text = "\n".join(said)
    [lost] = [line for line in text.splitlines() if "Serial link lost" in line]
    assert "resume()" not in text and "call " not in lost
    assert "plug the USB cable back in" in lost and "leave the cube in the grippers" in lost
    assert "goes on by itself" in lost


def test_what_a_bring_up_command_prints_after_a_lost_link_is_for_the_maker(monkeypatch, capsys):
    """The port goes away as `jog` sends its move (the port closed under the link: a pulled cable):
    the error line says what happened and what to do at the robot, not the link's API call."""
    from robot import cli
    from robot.arms import actions

    jog = actions.jog

    def jog_with_the_cable_pulled(link, *args, **kwargs):
        link.connection.port.close()
        return jog(link, *args, **kwargs)

    monkeypatch.setattr(actions, "jog", jog_with_the_cable_pulled)
    code = cli.main(["jog", "R", "90", "--sim", "--firmware", "mock"])
    err = capsys.readouterr().err
    [line] = [line for line in err.splitlines() if "went away" in line]
    # NOT_DONE: it had answered; marked, as every line of a --sim command
    assert code == 1 and line.startswith("SIMULATED | cube-robot jog: the serial port went away")
    assert "resume()" not in err
    assert "check the USB cable" in line and "plug the USB cable back in" in line and "'cube-robot home'" in line
