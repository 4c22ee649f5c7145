"""Sticker regions for a camera that is not quite where config.yaml `camera.pose` says.

Calibration detects sticker quads in every view of a solved cube; these may miss stickers (a face seen
at a steep angle) and include stickers no view reads.  One camera pose (elevation, azimuth, distance
and a small image shift) is fitted to the detections of all views at once, so the stickers found in
one view place those missed in another; the predicted regions are then snapped to the detections.
"""

from __future__ import annotations

import numpy as np


# The camera poses the region search covers around camera.pose: elevation and azimuth within
# POSE_SEARCH_DEG degrees, distance within POSE_SEARCH_DISTANCE (a fraction).
POSE_SEARCH_DEG = 15.0
POSE_SEARCH_DISTANCE = 0.25


def _quad_sizes(quads) -> np.ndarray:
    quads = np.asarray(quads, dtype=np.float64)
    x, y = quads[..., 0], quads[..., 1]
    area = 0.5 * np.abs(np.sum(x * np.roll(y, -1, axis=-1) - np.roll(x, -1, axis=-1) * y, axis=-1))
    return np.sqrt(area)


def _pose_misfit(regions, visible, detected: dict, sequence) -> float:
    """How badly predicted regions explain the detected stickers (0: every one on a detection).

    regions: the predicted regions of each view; visible: the predicted quads of every sticker the
    camera sees (a detection on a sticker no view reads is explained by those)."""
    total = 0.0
    visible_centres = np.asarray(visible, dtype=np.float64).mean(axis=1)
    for view in sequence.views:
        predicted = regions.quads(view.name)
        centres = predicted.mean(axis=1)
        size = max(float(np.median(_quad_sizes(predicted))), 1.0)
        found = detected.get(view.name, [])
        if not found:
            total += 0.5 * len(centres)
            continue
        found_centres = np.array([q.mean(axis=0) for q in found])
        to_found = np.linalg.norm(centres[:, None] - found_centres[None], axis=2) / size
        from_found = np.linalg.norm(visible_centres[:, None] - found_centres[None], axis=2) / size
        total += np.minimum(to_found.min(axis=1), 0.5).sum() + np.minimum(from_found.min(axis=0), 0.5).sum()
    return float(total)


def fit_camera_pose(detected: dict, sequence, base_pose, scan_regions=None, facelet_quads=None):
    """The camera pose (elevation, azimuth, distance near base_pose, and an image shift) whose predicted
    regions best explain the sticker quads detected in every view.  All views share one camera, so
    stickers found in one view place the ones missed in another.  Returns (pose, offset_px).
    scan_regions, facelet_quads: the puzzle's geometry (default the 2x2x2's camera_geometry; the
    3x3x3's calibration passes camera_geometry3's)."""
    from dataclasses import replace

    from . import camera_geometry

    scan_regions = scan_regions or camera_geometry.scan_regions
    facelet_quads = facelet_quads or camera_geometry.facelet_quads

    # The camera sees the same robot-frame positions in every view: the union of what the views read.
    seen = sorted({name for view in sequence.views for name in view.facelets})

    def misfit(elevation, azimuth, distance, offset=(0.0, 0.0)):
        pose = replace(base_pose, elevation_deg=elevation, azimuth_deg=azimuth, distance_mm=distance)
        return _pose_misfit(scan_regions(pose, sequence, offset), facelet_quads(pose, seen, offset), detected,
                            sequence)

    best = (base_pose.elevation_deg, base_pose.azimuth_deg, base_pose.distance_mm)
    step_deg, step_distance = 5.0, 0.1 * base_pose.distance_mm
    for span in (3, 2, 2, 2):  # coarse to fine around the best so far
        candidates = [(best[0] + i * step_deg, best[1] + j * step_deg, best[2] + k * step_distance)
                      for i in range(-span, span + 1) for j in range(-span, span + 1) for k in range(-span, span + 1)]
        candidates = [c for c in candidates
                      if abs(c[0] - base_pose.elevation_deg) <= POSE_SEARCH_DEG + 1e-9
                      and abs(c[1] - base_pose.azimuth_deg) <= POSE_SEARCH_DEG + 1e-9
                      and abs(c[2] / base_pose.distance_mm - 1) <= POSE_SEARCH_DISTANCE + 1e-9]
        best = min(candidates, key=lambda c: misfit(*c))
        step_deg, step_distance = step_deg / 2, step_distance / 2
    pose = replace(base_pose, elevation_deg=best[0], azimuth_deg=best[1], distance_mm=best[2])
    # A small image shift (mount play): the median offset of the matched stickers.
    regions = scan_regions(pose, sequence)
    shifts = []
    for view in sequence.views:
        found = detected.get(view.name, [])
        predicted = regions.quads(view.name)
        size = float(np.median(_quad_sizes(predicted)))
        for centre in predicted.mean(axis=1):
            if found:
                nearest = min((q.mean(axis=0) for q in found), key=lambda c: np.linalg.norm(c - centre))
                if np.linalg.norm(nearest - centre) < 0.5 * size:
                    shifts.append(nearest - centre)
    offset = tuple(float(v) for v in np.median(shifts, axis=0)) if shifts else (0.0, 0.0)
    return pose, offset


def detected_regions_guess(detected: dict, sequence, base_pose):
    """The regions predicted from the camera pose fitted to the detected stickers (fit_camera_pose)."""
    from .camera_geometry import scan_regions

    pose, offset = fit_camera_pose(detected, sequence, base_pose)
    return scan_regions(pose, sequence, offset)
