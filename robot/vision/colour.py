"""Colour maths (sRGB <-> CIELAB) and the colour calibration file.

Lab (D65 white, CIE 1976) is used because distances in it follow what the eye
calls "a different colour" far better than RGB distances do: red vs orange and
white vs yellow are far apart in a and b even when their RGB values are close.

The calibration (`Calibration`) is what `cube-robot calibrate colours` measures from a
solved cube: for each named colour its Lab centre and spread, optionally a
per-region RGB gain (to even out light that differs across the camera's view),
the camera settings it was measured with, a format version and a timestamp.
It is saved as YAML (where config scan.colours_file says; default `calibration/colors.yaml`):

    version: 1
    created: '2025-01-31T12:00:00+00:00'
    camera: {exposure: -6, white_balance: 4500}      # free-form, as measured
    colours:
      white: {lab: [92.1, -0.5, 3.2], sigma: [4.0, 1.5, 2.0]}
      red:   {lab: [45.0, 60.2, 38.1], sigma: [5.0, 4.0, 4.0], samples: 4}
      ...
    regions:                                         # optional
      U1: {gain: [1.02, 1.00, 0.97]}

Usage:
    cal = Calibration({"white": ColourStats.from_rgb([[250, 250, 248], ...]), ...})
    cal.save("calibration/colors.yaml");  cal = Calibration.load("calibration/colors.yaml")
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from ..config import read_yaml_file
from ..cube import facelet_index

CALIBRATION_VERSION = 1

# D65 reference white (XYZ, Y = 1) and the sRGB -> XYZ matrix (IEC 61966-2-1).
_WHITE_D65 = np.array([0.95047, 1.0, 1.08883])
_RGB_TO_XYZ = np.array([
    [0.4124564, 0.3575761, 0.1804375],
    [0.2126729, 0.7151522, 0.0721750],
    [0.0193339, 0.1191920, 0.9503041],
])
_XYZ_TO_RGB = np.linalg.inv(_RGB_TO_XYZ)
_EPSILON = 216 / 24389  # CIE constants: below this the Lab curve is linear
_KAPPA = 24389 / 27


class CalibrationError(ValueError):
    """A calibration file that is missing, unreadable or malformed (message names the file and key)."""


def srgb_to_lab(rgb) -> np.ndarray:
    """sRGB 0-255 (any shape ending in 3) -> CIELAB (L 0-100, a, b)."""
    c = np.clip(np.asarray(rgb, dtype=float) / 255.0, 0.0, 1.0)
    linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    xyz = linear @ _RGB_TO_XYZ.T / _WHITE_D65
    f = np.where(xyz > _EPSILON, np.cbrt(xyz), (_KAPPA * xyz + 16) / 116)
    return np.stack(
        [116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], axis=-1
    )


def lab_to_srgb(lab) -> np.ndarray:
    """CIELAB -> sRGB 0-255 floats (clipped to the sRGB gamut)."""
    lab = np.asarray(lab, dtype=float)
    fy = (lab[..., 0] + 16) / 116
    f = np.stack([fy + lab[..., 1] / 500, fy, fy - lab[..., 2] / 200], axis=-1)
    xyz = np.where(f**3 > _EPSILON, f**3, (116 * f - 16) / _KAPPA) * _WHITE_D65
    linear = np.clip(xyz @ _XYZ_TO_RGB.T, 0.0, 1.0)
    c = np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055)
    return c * 255.0


@dataclass
class ColourStats:
    """One sticker colour: Lab centre and spread.

    sigma: per-axis standard deviation (L, a, b); covariance: optional full 3x3
    (when given, sigma is its diagonal's square root).  samples: how many
    readings they came from.
    """

    lab: np.ndarray
    sigma: np.ndarray = field(default_factory=lambda: np.array([4.0, 3.0, 3.0]))
    covariance: np.ndarray | None = None
    samples: int = 0

    def __post_init__(self):
        self.lab = np.asarray(self.lab, dtype=float).reshape(3)
        if self.covariance is not None:
            self.covariance = np.asarray(self.covariance, dtype=float).reshape(3, 3)
            self.sigma = np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))
        self.sigma = np.asarray(self.sigma, dtype=float).reshape(3)

    @classmethod
    def from_rgb(cls, readings) -> "ColourStats":
        """Stats of several sRGB readings of the same colour (e.g. the 4 stickers of a solved face)."""
        lab = srgb_to_lab(np.asarray(readings, dtype=float).reshape(-1, 3))
        covariance = np.cov(lab.T) if len(lab) > 1 else None
        return cls(lab.mean(axis=0), covariance=covariance, samples=len(lab))

    @property
    def rgb(self) -> np.ndarray:
        return lab_to_srgb(self.lab)

    def to_dict(self) -> dict:
        out: dict[str, object] = {"lab": _floats(self.lab), "sigma": _floats(self.sigma)}
        if self.covariance is not None:
            out["covariance"] = [_floats(row) for row in self.covariance]
        if self.samples:
            out["samples"] = int(self.samples)
        return out


@dataclass
class RegionStats:
    """Light correction for one sticker region of the camera view.

    gain: per-channel multiplier applied to that facelet's raw sRGB reading
    before decoding (1, 1, 1 = no correction), e.g. measured as reference
    white / reading on a white sticker.
    """

    gain: np.ndarray = field(default_factory=lambda: np.ones(3))

    def __post_init__(self):
        self.gain = np.asarray(self.gain, dtype=float).reshape(3)

    def to_dict(self) -> dict:
        return {"gain": _floats(self.gain)}


@dataclass
class Calibration:
    """Measured sticker colours (see the module doc for the file format).

    colours: colour name -> ColourStats (6 of them for a standard cube; names
    are free text such as "white" or "red").  regions: facelet name ("U1") ->
    RegionStats (optional).  camera: the camera settings used (free-form).
    """

    colours: dict
    regions: dict = field(default_factory=dict)
    camera: dict = field(default_factory=dict)
    version: int = CALIBRATION_VERSION
    created: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))

    def __post_init__(self):
        if len(self.colours) != 6:
            raise CalibrationError(
                f"a calibration needs exactly 6 colours, got {len(self.colours)}: {', '.join(self.colours)}"
            )

    @property
    def names(self) -> list[str]:
        return list(self.colours)

    def centres_lab(self) -> np.ndarray:
        """(6, 3) Lab centres in the order of `names`."""
        return np.array([stats.lab for stats in self.colours.values()])

    def correct(self, rgb) -> np.ndarray:
        """Apply the per-region gains to (24, 3) readings in facelet order."""
        out = np.asarray(rgb, dtype=float).copy()
        for name, region in self.regions.items():
            out[facelet_index(name)] *= region.gain
        return np.clip(out, 0.0, 255.0)

    def to_dict(self) -> dict:
        out = {
            "version": int(self.version),
            "created": str(self.created),
            "camera": dict(self.camera),
            "colours": {name: stats.to_dict() for name, stats in self.colours.items()},
        }
        if self.regions:
            out["regions"] = {name: region.to_dict() for name, region in self.regions.items()}
        return out

    def save(self, path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "# Sticker colour calibration (cube-robot).  Lab = CIELAB D65; see robot/vision/colour.py.\n"
            + yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=None)
        )
        return path

    @classmethod
    def load(cls, path) -> "Calibration":
        path = Path(path)
        data = read_yaml_file(path, CalibrationError, "the colour calibration",
                              "run 'cube-robot calibrate colours' to make one")
        return cls.from_dict(data, source=path)

    @classmethod
    def from_dict(cls, data, source="<calibration>") -> "Calibration":
        if not isinstance(data, dict):
            raise CalibrationError(f"{source}: expected a mapping with 'colours', got {type(data).__name__}")
        version = data.get("version", CALIBRATION_VERSION)
        if version != CALIBRATION_VERSION:
            raise CalibrationError(
                f"{source}: version: calibration format {version!r} is not supported "
                f"(this program reads version {CALIBRATION_VERSION}); run 'cube-robot calibrate colours' again"
            )
        colours_node = data.get("colours")
        if not isinstance(colours_node, dict):
            raise CalibrationError(f"{source}: colours: missing or not a mapping of name -> {{lab, sigma}}")
        colours = {}
        for name, node in colours_node.items():
            try:
                colours[str(name)] = ColourStats(
                    lab=node["lab"], sigma=node.get("sigma", [4.0, 3.0, 3.0]),
                    covariance=node.get("covariance"), samples=int(node.get("samples", 0)),
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise CalibrationError(
                    f"{source}: colours.{name}: needs 'lab: [L, a, b]' and optional 'sigma: [sL, sa, sb]' ({exc})"
                ) from None
        regions = {}
        for name, node in (data.get("regions") or {}).items():
            try:
                facelet_index(str(name))
                regions[str(name)] = RegionStats(gain=node["gain"])
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                raise CalibrationError(
                    f"{source}: regions.{name}: expected a facelet name (U1..B4) with 'gain: [r, g, b]' ({exc})"
                ) from None
        try:
            return cls(
                colours=colours, regions=regions, camera=dict(data.get("camera") or {}),
                version=version, created=str(data.get("created", "")),
            )
        except CalibrationError as exc:
            raise CalibrationError(f"{source}: colours: {exc}") from None


def _floats(values) -> list[float]:
    return [round(float(v), 4) for v in values]
