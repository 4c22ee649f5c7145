"""The run's events (robot/run/events.py): the report, the progress line and the solve log are built
from them, a recorded stream replays into the same report, and a failing watcher cannot stop a run."""

import ast
import json
import threading
from pathlib import Path

import pytest

from robot import config as config_module
from robot.run import events as ev
from robot.run.events import EventBus, ProgressLine
from robot.run.options import RunOptions
from robot.run.report import RunReport
from robot.run.simulated import run_simulated
from conftest import scratch_config

RUN = Path(__file__).resolve().parents[1] / "robot" / "run"


def recorded_run(tmp_path, **options):
    config = config_module.load(scratch_config(tmp_path))
    bus = EventBus()
    recorded = []
    bus.subscribe(recorded.append)
    report = run_simulated(config, RunOptions(sim=True, firmware="mock", **options), lambda text: None, bus)
    return report, recorded


@pytest.mark.parametrize("options", [
    {"scramble": "R U F'"},  # solved, verified by the rescan
    {"scramble": "R U2 F", "estop_at": 3, "verify": False},  # a stop with the cube's state named
    {"scramble": "R U", "bad_scan": "dark", "verify": False},  # a doubtful scan, then a good one
], ids=["solved", "estop", "bad-scan"])
def test_a_recorded_run_replays_into_the_same_report(tmp_path, options):
    report, recorded = recorded_run(tmp_path, **options)
    assert isinstance(recorded[0], ev.RunStarted) and isinstance(recorded[-1], ev.RunEnded)
    assert recorded[-1].outcome == report.result() and recorded[-1].exit_status == report.exit_status()
    kinds = {type(event) for event in recorded}
    assert {ev.StartPressed, ev.StageStarted, ev.StageEnded, ev.FrameTaken, ev.ViewsDecoded, ev.PlanFound,
            ev.ActionDone} <= kinds
    replayed = RunReport.replay(recorded)
    assert replayed.to_json() == report.to_json()
    assert replayed.format() == report.format()
    assert report.waterfall and report.plan  # the report was filled by its events, not left empty


@pytest.mark.parametrize("options", [
    {"scramble": "R U F'"},  # an adaptive scan, the plan, the rescan
    {"scramble": "R U", "bad_scan": "dark", "verify": False},  # a doubtful scan, then a good one
], ids=["solved", "bad-scan"])
def test_a_recorded_run_says_each_step_as_it_happens(tmp_path, options):
    report, recorded = recorded_run(tmp_path, **options)
    at = {id(event): k for k, event in enumerate(recorded)}
    stage_ended = {event.stage: at[id(event)] for event in recorded if isinstance(event, ev.StageEnded)}

    # The plan: each action said sent once, in order, before the ActionDone that counts it.
    [plan] = [event for event in recorded if isinstance(event, ev.PlanFound)]
    assert [e.action for e in recorded if isinstance(e, ev.ActionSent)] == list(range(1, plan.actions + 1))
    said_sent = 0
    for event in recorded:
        if isinstance(event, ev.ActionSent):
            said_sent = event.action
        elif isinstance(event, ev.ActionDone):
            assert event.completed <= said_sent, f"action {event.completed} done before it was said sent"

    # Each scan: its frames as they are taken (before the stages that scan adds once it is over), each
    # decode of the views so far after its view's frame, the last one the scan's outcome.
    first = config_module.load(tmp_path / "config.yaml").scan.adaptive_from
    scans, frames, decodes = [], [], []
    for event in recorded:
        if isinstance(event, ev.FrameTaken):
            frames.append(event)
        elif isinstance(event, ev.ViewDecoded):
            decodes.append(event)
        elif isinstance(event, (ev.ViewsDecoded, ev.ScanRefused, ev.Checked)) and frames:
            scans.append((frames, decodes, event))
            frames, decodes = [], []
    assert len(scans) == (2 if "bad_scan" in options else 1) + ("verify" not in options)
    for frames, decodes, end in scans:
        prefix = frames[0].view.rpartition(": ")[0] + ": " if ": " in frames[0].view else ""
        stage = "verify" if prefix == "verify: " else "scan"
        started = max(k for k, e in enumerate(recorded) if isinstance(e, ev.StageStarted) and e.stage == stage
                      and k < at[id(frames[0])])
        for frame in frames:
            assert started < at[id(frame)] < stage_ended[f"{prefix}camera open"], frame  # live, not replayed after
            assert frame.exposure_start_ms == recorded[stage_ended[f"{frame.view}: frame"]].start_ms
        taken = {frame.view: at[id(frame)] for frame in frames}
        assert all(taken[d.view] < at[id(d)] for d in decodes)
        assert all(d.facelets is None and d.doubt for d in decodes[:-1])  # a doubt takes the next view
        if isinstance(end, ev.ViewsDecoded):
            assert [d.views for d in decodes] == list(range(first, end.views + 1)) and end.views == len(frames)
            assert (decodes[-1].facelets, decodes[-1].confidence) == (end.facelets, end.confidence)
        elif isinstance(end, ev.ScanRefused):
            assert [d.views for d in decodes] == list(range(first, len(frames) + 1))
            assert decodes[-1].facelets is None and decodes[-1].doubt == end.error
        else:  # the rescan reads every view, then decodes once
            assert [d.views for d in decodes] == [len(frames)] and decodes[-1].facelets is not None


def test_the_fault_outside_the_plan_is_a_warning_event(tmp_path):
    report, recorded = recorded_run(tmp_path, scramble="R U", disconnect_at=99, verify=False)
    [warning] = [event.text for event in recorded if isinstance(event, ev.RunWarning)]
    assert warning.startswith("--disconnect-at 99 is outside this plan's actions") and report["warnings"] == [warning]


def test_a_failing_watcher_does_not_stop_the_run(tmp_path):
    config = config_module.load(scratch_config(tmp_path))
    said = []
    bus = EventBus(warn=said.append)
    calls = []

    def broken(event):
        calls.append(event)
        raise ValueError("a watcher's bug")

    bus.subscribe(broken)
    report = run_simulated(config, RunOptions(sim=True, firmware="mock", scramble="R U", verify=False),
                           lambda text: None, bus)
    assert report.result() == "SOLVED" and report.execute_ok and report.plan
    assert len(calls) > 10 and bus.failures(broken) == len(calls)  # called for every event all the same
    [line] = said  # said once, not once per event
    assert "broken" in line and "RunStarted" in line and "ValueError: a watcher's bug" in line


def test_the_solve_log_is_written_from_the_events(tmp_path, capsys):
    from robot import cli

    scratch_config(tmp_path)
    code = cli.main(["run", "--sim", "--firmware", "mock", "--scramble", "R U", "--no-verify", "--json",
                     "--config", str(tmp_path / "config.yaml")])
    printed = json.loads(capsys.readouterr().out)
    [logged] = [json.loads(line) for line in (tmp_path / "data" / "solve-log.jsonl").read_text().splitlines()]
    assert code == 0 and logged == printed and logged["outcome"] == "SOLVED"


def test_a_handler_that_raises_is_said_once_and_the_others_still_run():
    said, seen = [], []
    bus = EventBus(warn=said.append)

    def first(event):
        raise RuntimeError("boom")

    bus.subscribe(first)
    bus.subscribe(seen.append)
    for n in range(3):
        bus.publish(ev.RunWarning(str(n)))
    assert [event.text for event in seen] == ["0", "1", "2"]
    assert len(said) == 1 and "RuntimeError: boom" in said[0] and bus.failures(first) == 3


def test_ctrl_c_in_a_handler_is_not_swallowed():
    bus = EventBus(warn=lambda text: None)

    def interrupted(event):
        raise KeyboardInterrupt

    bus.subscribe(interrupted)
    with pytest.raises(KeyboardInterrupt):
        bus.publish(ev.StartPressed())


def test_subscribing_from_another_thread_while_events_are_published():
    """A panel subscribes from its own thread while the run publishes: each handler sees, in order,
    every event published after its subscription returned."""
    bus = EventBus()
    publishing = threading.Event()
    published = []

    def publisher():
        for n in range(5000):
            bus.publish(ev.ActionDone(n, 5000))
            published.append(n)
            publishing.set()

    seen = [[] for _ in range(20)]
    thread = threading.Thread(target=publisher)
    thread.start()
    publishing.wait()
    marks = []
    for log in seen:
        bus.subscribe(lambda event, log=log: log.append(event.completed))
        marks.append(len(published))  # event `mark` may be half published; every later one is seen
    thread.join()
    for log, mark in zip(seen, marks):
        assert log == sorted(log)
        assert set(published[mark + 1:]) <= set(log)


def test_unsubscribed_handlers_hear_nothing_more():
    bus, seen = EventBus(), []
    handler = bus.subscribe(seen.append)
    bus.publish(ev.StartPressed())
    bus.unsubscribe(handler)
    bus.publish(ev.StartPressed())
    assert len(seen) == 1


def test_the_progress_line_is_drawn_from_the_events():
    import io

    stream = io.StringIO()
    line = ProgressLine(stream=stream, enabled=True)
    line(ev.PlanFound(moves="R U", actions=4, solve_ms=1.0, predicted_ms=900, plan={}))
    line(ev.ActionDone(4, 4))
    line(ev.StreamEnded(4, 4))
    text = stream.getvalue()
    assert "Solving [" in text and "4/4 actions" in text and text.endswith("\n")


def test_the_pipeline_does_not_probe_its_robot_or_know_the_simulator():
    """robot/run/pipeline.py reads its robot through the typed Robot protocol: no getattr/hasattr, and
    nothing from robot.sim (the simulator's faults live behind the robot's hooks)."""
    for name in ("pipeline.py", "ready.py", "robot.py", "hardware.py", "simulated.py", "events.py", "options.py"):
        tree = ast.parse((RUN / name).read_text())
        delegating = {id(node) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "__getattr__"
                      for node in ast.walk(f)}  # a wrapper handing on to what it wraps asks nothing
        probes = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call) and id(node) not in delegating
                  and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")]
        assert not probes, f"robot/run/{name}: getattr/hasattr at lines {probes}"
    pipeline = ast.parse((RUN / "pipeline.py").read_text())
    imported = {node.module for node in ast.walk(pipeline) if isinstance(node, ast.ImportFrom) and node.module}
    assert not any(module.startswith("sim") for module in imported), imported
    text = (RUN / "pipeline.py").read_text()
    assert "estop_at" not in text and "disconnect_at" not in text


def test_an_emulator_failure_carries_its_own_advice():
    from robot.errors import DeviceError
    from robot.run.stop_words import advice_for
    from robot.sim.emulator import EmulatorError

    error = EmulatorError("harness gave no pty path")
    assert isinstance(error, DeviceError)
    assert advice_for(error).startswith("the firmware emulator failed: run '") and "harness" in advice_for(error)
    assert advice_for(RuntimeError("x")) == "see the error above; 'cube-robot doctor' checks the whole setup"


def test_the_robot_protocol_names_every_member_the_run_uses():
    from robot import cube
    from robot.run.robot import HardwareRobot, Robot
    from robot.sim.robot_sim import SimulatedRobot

    members = set(Robot.__annotations__) | {name for name in vars(Robot) if not name.startswith("_")}
    assert {"backend", "link", "camera", "view_mover", "regions", "calibration", "tables", "start_note",
            "wait_start", "before_scan", "plan_ready", "action_done"} <= members
    config = config_module.defaults()
    for robot in (HardwareRobot(config, port="/dev/null-robot"), SimulatedRobot(config, cube.SOLVED, firmware="mock")):
        missing = [name for name in members if not hasattr(robot, name)]
        assert not missing, f"{type(robot).__name__} lacks {missing}"


def test_a_run_that_did_not_start_is_told_in_events_too():
    from robot.run.hardware import not_started_report
    from robot.run.robot import PortNotReady

    bus, recorded = EventBus(), []
    bus.subscribe(recorded.append)
    report = not_started_report(PortNotReady("the robot's port /dev/x does not answer", "check the USB cable",
                                             "none on /dev/x (silent)"), bus)
    assert report.result() == "NOT STARTED" and isinstance(recorded[-1], ev.RunEnded)
    assert report.errors == ["the robot's port /dev/x does not answer"] and report.advice == "check the USB cable"
    assert report.firmware == "none on /dev/x (silent)"
    assert RunReport.replay(recorded).to_json() == report.to_json()
