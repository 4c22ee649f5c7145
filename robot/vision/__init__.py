"""Vision: camera -> sticker readings -> a trusted facelet string.

    from robot.vision import decode, VisionError
    result = decode(rgb)          # rgb: (24, 3) sRGB 0-255 in facelet order U1..B4
    result.facelets               # e.g. 'UUUURRRRFFFFDDDDLLLLBBBB' (letters by the decoded scheme)
    result.confidence             # 0..1; below the configured margin decode raises VisionError

Modules: colour (sRGB <-> Lab, Calibration), decode (joint legal-cube
decoding), net (cube-net pictures), plus the camera/scan modules.  Importing
this package loads no OpenCV and touches no camera.
"""

from .colour import Calibration, CalibrationError, ColourStats, RegionStats
from .decode import DecodeResult, StickerInfo, VisionError, colour_drift, decode

__all__ = [
    "Calibration", "CalibrationError", "ColourStats", "RegionStats",
    "DecodeResult", "StickerInfo", "VisionError", "colour_drift", "decode",
]
