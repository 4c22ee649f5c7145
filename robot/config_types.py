"""The settings as typed, frozen objects: one dataclass per section of config.yaml.

robot/config.py validates a file against the schema (robot/config_schema.py: kinds, defaults, bounds,
error lines) and then builds these with `build`; code outside the config modules reads attributes
(`config.link.ack_timeout_ms`), never keys.  Lists are tuples; the free-form parts (arm pairs, plan
actions) are mappings.  tests/test_config.py checks that the fields and the schema name the same keys.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, TypeVar


@dataclass(frozen=True)
class RobotTiming:
    """robot.timing: None = derived from `motion` (robot/motion.py robot_timing)."""

    quarter_turn_ms: int | None
    half_turn_ms: int | None
    regrip_ms: int | None


@dataclass(frozen=True)
class RobotConfig:
    pairs: Mapping[str, tuple[str, ...]]  # pair name -> faces its arms grip
    turn_angles: tuple[int, ...]
    start_grip: str  # a pair name or "any"
    timing: RobotTiming
    square_released_arms: bool  # a released pair's arms turn back square before the other pair turns


@dataclass(frozen=True)
class Robot3Config:
    pairs: Mapping[str, tuple[str, ...]]
    tilt_angles: tuple[int, ...]
    search_budget_s: float


@dataclass(frozen=True)
class TablesConfig:
    dir: str


@dataclass(frozen=True)
class LinkConfig:
    port: str | None  # None: ask every serial port
    baud: int
    ack_timeout_ms: int
    silence_timeout_ms: int
    handshake_timeout_ms: int
    max_resends: int
    reconnect_window_ms: int


@dataclass(frozen=True)
class HomingConfig:
    sensors: bool
    sensor_active: str  # "low" or "high"


@dataclass(frozen=True)
class ArmConfig:
    invert: bool
    zero_offset_steps: int
    servo_open_us: int | None  # None: motion.servo_open_us
    servo_closed_us: int | None  # None: motion.servo_closed_us


@dataclass(frozen=True)
class MotionConfig:
    steps_per_rev: int
    max_speed_steps_per_s: int
    accel_steps_per_s2: int
    servo_open_us: int
    servo_closed_us: int
    servo_speed_us_per_ms: float
    jaw_clear_pct: int
    jaw_contact_pct: int
    jaw_open_gap_mm: int
    cube_mm: int
    idle_off_s: int
    homing: HomingConfig
    arms: Mapping[str, ArmConfig]  # arm face -> its settings


@dataclass(frozen=True)
class CameraPose:
    elevation_deg: float
    azimuth_deg: float
    distance_mm: float
    fov_deg: float
    cube_mm: float


@dataclass(frozen=True)
class CameraLighting:  # SIMULATED: the simulated lamp (robot/sim/lamp.py)
    preset: str  # none, glare, side, dim
    strength: float | None  # None: the preset's
    spread_deg: float | None
    position_mm: tuple[float, ...] | None  # camera frame: right, up, back; None: the preset's


@dataclass(frozen=True)
class CameraConfig:
    device: str
    width: int
    height: int
    exposure: str
    white_balance: str
    settle_frames: int
    flush_frames: int
    average_frames: int
    fps: float
    exposure_ms: float
    delivery_ms: float
    buffer_frames: int
    settle_ms: float
    pose: CameraPose
    lighting: CameraLighting


@dataclass(frozen=True)
class ScanViewConfig:
    name: str
    actions: tuple[Mapping[str, Any], ...]  # as in plans: {op: grip, pair: RL}, {op: turn, arms: {...}}
    facelets: tuple[str, ...]
    camera: str  # "main" or "second"


@dataclass(frozen=True)
class SecondCameraConfig:
    device: str
    elevation_deg: float
    azimuth_deg: float


@dataclass(frozen=True)
class SamplingConfig:
    inner_fraction: float  # linear size of the sampled inner part of a region
    trim_fraction: float  # share of pixels farthest from the median dropped
    glare_delta_l: float  # glare: this much brighter than the sticker and much less saturated
    shadow_delta_l: float  # shadow: this much darker than the sticker


@dataclass(frozen=True)
class ScanConfig:
    views: tuple[ScanViewConfig, ...]
    finish: tuple[Mapping[str, Any], ...]
    second_camera: SecondCameraConfig
    adaptive_from: int
    second_look: bool
    regions_file: str
    colours_file: str
    sampling: SamplingConfig
    drift_warn_delta_e: float
    save_images: bool
    images_dir: str
    preview_dir: str


@dataclass(frozen=True)
class Scan3ViewConfig:
    name: str
    ops: tuple[Mapping[str, Any], ...]  # robot3 ops as in 3x3x3 plans: {op: tilt, arms: {R: 90, L: -90}}, ...
    facelets: tuple[str, ...]


@dataclass(frozen=True)
class Scan3Config:  # the 3x3x3 scan (robot/scan_sequence3.py)
    cube_mm: float
    views: tuple[Scan3ViewConfig, ...]
    finish: tuple[Mapping[str, Any], ...]
    regions_file: str
    colours_file: str


@dataclass(frozen=True)
class DecodeConfig:
    lightness_weight: float
    shading_correction: bool
    max_chroma_gain: float
    noise_floor: float
    min_margin: float
    full_margin: float
    refine_alternatives: int
    max_looks_other: float
    max_total_looks_other: float


@dataclass(frozen=True)
class RunConfig:
    data_dir: str
    scan_attempts: int
    verify_after: bool
    start_timeout_s: float


@dataclass(frozen=True)
class PanelConfig:
    host: str
    http_port: int
    token: str


@dataclass(frozen=True)
class JawShapeConfig:  # SIMULATED: the jaws' shape, the same six settings for the 2x2x2's and the 3x3x3's grippers
    jaw_width_mm: float
    jaw_depth_mm: float
    jaw_thickness_mm: float
    open_gap_mm: float
    crossbar_gap_mm: float
    shaft_radius_mm: float


@dataclass(frozen=True)
class GripperConfig(JawShapeConfig):  # SIMULATED: the virtual robot's grippers (robot/sim/render_arms.py)
    servo_speed_us_per_ms: float
    clear_pct: int
    contact_pct: int
    true_jaws: bool


@dataclass(frozen=True)
class Gripper3Config(JawShapeConfig):  # SIMULATED: the virtual robot's 3x3x3 grippers (robot/sim/render3.py)
    pass


@dataclass(frozen=True)
class SimulatedRobotConfig:  # SIMULATED only: the virtual robot's true build
    draw_arms: bool
    gripper: GripperConfig
    gripper3: Gripper3Config
    shadow: float


@dataclass(frozen=True)
class Config:
    """Every setting, validated; `path` is the file it came from (None: built-in defaults or a
    mapping), `notes` the deprecation notes of its loading.  Neither counts in comparisons."""

    robot: RobotConfig
    robot3: Robot3Config
    tables: TablesConfig
    link: LinkConfig
    motion: MotionConfig
    camera: CameraConfig
    scan: ScanConfig
    scan3: Scan3Config
    decode: DecodeConfig
    run: RunConfig
    panel: PanelConfig
    simulated_robot: SimulatedRobotConfig
    path: Path | None = field(default=None, compare=False)
    notes: tuple[str, ...] = field(default=(), compare=False)


T = TypeVar("T")


def build(kind: type[T], data: Mapping[str, Any]) -> T:
    """The dataclass `kind` from its plain, already validated form (nested dicts and lists)."""
    hints = typing.get_type_hints(kind)
    values = {f.name: _convert(hints[f.name], data[f.name]) for f in dataclasses.fields(kind)  # type: ignore[arg-type]
              if f.name in data}
    return kind(**values)


def _convert(hint: Any, value: Any) -> Any:
    """One value to the field type `hint` (dataclass, tuple[X, ...], Mapping[str, X], X | None, scalar)."""
    if value is None:
        return None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return _convert(next(a for a in args if a is not type(None)), value)
    if dataclasses.is_dataclass(hint):
        return value if isinstance(value, hint) else build(hint, value)  # type: ignore[arg-type]
    if origin is tuple:
        return tuple(_convert(args[0], item) for item in value)
    if origin is not None and issubclass(origin, Mapping):
        return {str(key): _convert(args[1], item) for key, item in value.items()}
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def field_type(kind: type, name: str) -> Any:
    """The declared type of field `name` of dataclass `kind`."""
    return typing.get_type_hints(kind)[name]


def convert(hint: Any, value: Any) -> Any:
    """A plain value (dict, list, scalar) as the field type `hint` holds it."""
    return _convert(hint, value)


def to_plain(value: Any) -> Any:
    """A settings object back to plain data (dicts and lists), as config.yaml would hold it."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)
                if f.compare}
    if isinstance(value, tuple):
        return [to_plain(item) for item in value]
    if isinstance(value, Mapping):
        return {key: to_plain(item) for key, item in value.items()}
    return value
