"""From a puzzle's geometry to permutations and orientation changes.

Each piece sits at the place p = sum of the normals of its faces; its stickers
(slots) are ordered: the orbit's reference face first, then clockwise seen from
outside (as robot/cube.py orders the 2x2x2 corner facelets).  A turn rotates
the pieces with p . axis > cut; a piece's reference sticker moving from slot 0
of place i to slot d of place j gives the orientation change d.

Conventions (Kociemba's): perm[j] = the piece at place j; ori[j] = the slot of
place j holding that piece's reference sticker; a move maps
new_perm[j] = perm[src[j]], new_ori[j] = (ori[src[j]] + twist[j]) % m.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .definition import POWER_SUFFIXES, PuzzleSpec, TurnSpec

TOLERANCE = 1e-6


@dataclass(frozen=True)
class OrbitGeometry:
    name: str
    orientations: int
    pieces: tuple[str, ...]
    places: np.ndarray  # (n, 3): where each piece sits when solved
    slots: tuple[tuple[str, ...], ...]  # each place's sticker faces in slot order


@dataclass(frozen=True)
class OrbitMove:
    src: np.ndarray  # new_perm[j] = perm[src[j]]
    twist: np.ndarray  # new_ori[j] = (ori[src[j]] + twist[j]) % orientations


@dataclass(frozen=True)
class DerivedMove:
    name: str
    base: str  # the move (or rotation) it is a power of
    power: int  # quarter (or third) turns clockwise
    order: int
    axis: np.ndarray | None  # None: a move given explicitly
    orbits: tuple[OrbitMove, ...]


def rotation_matrix(axis, angle: float) -> np.ndarray:
    """Rotation by `angle` radians, counterclockwise seen from the tip of `axis` (Rodrigues)."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) * np.cos(angle) + np.sin(angle) * k + (1 - np.cos(angle)) * np.outer(a, a)


def orbit_geometry(spec: PuzzleSpec) -> tuple[OrbitGeometry, ...]:
    result = []
    for orbit in spec.orbits:
        places, slots = [], []
        for piece in orbit.pieces:
            normals = {face: spec.faces[face].normal for face in piece}
            places.append(sum(normals.values()))
            slots.append(_slot_order(piece, normals, orbit.reference))
        result.append(OrbitGeometry(orbit.name, orbit.orientations, orbit.pieces,
                                    np.array(places, dtype=float), tuple(slots)))
    return tuple(result)


def _slot_order(piece: str, normals: dict, reference: tuple[str, ...]) -> tuple[str, ...]:
    """Reference face first, then clockwise seen from outside."""
    first = next((face for face in reference if face in piece), piece[0])
    rest = [face for face in piece if face != first]
    if len(rest) == 2:
        # Clockwise seen from outside <=> det(n_first, n_second, n_third) < 0.
        if np.linalg.det(np.array([normals[first], normals[rest[0]], normals[rest[1]]])) > 0:
            rest.reverse()
    return (first, *rest)


def derive_moves(spec: PuzzleSpec, orbits: tuple[OrbitGeometry, ...]) -> tuple[list, list]:
    """(moves, rotations): every power of every turn, as DerivedMove."""
    moves = [_derive(spec, orbits, turn, power, suffix)
             for turn in spec.moves for power, suffix in POWER_SUFFIXES[turn.order]]
    rotations = [_derive(spec, orbits, turn, power, suffix)
                 for turn in spec.rotations for power, suffix in POWER_SUFFIXES[turn.order]]
    return moves, rotations


def _derive(spec: PuzzleSpec, orbits, turn: TurnSpec, power: int, suffix: str) -> DerivedMove:
    if turn.explicit is not None:
        return _explicit_power(orbits, turn, turn.explicit, power, suffix)
    assert turn.axis is not None, "the loader gives every turn an axis or an explicit permutation"
    rotation = rotation_matrix(turn.axis, -2 * np.pi * power / turn.order)
    unit = turn.axis / np.linalg.norm(turn.axis)
    orbit_moves = []
    for orbit in orbits:
        n = len(orbit.pieces)
        src, twist = np.arange(n), np.zeros(n, dtype=np.int64)
        for i, place in enumerate(orbit.places):
            if turn.cut is not None and place @ unit <= turn.cut + TOLERANCE:
                continue
            target = rotation @ place
            j = _find_place(orbit.places, target)
            if j is None:
                raise turn.field.error(
                    f"turning {turn.name}{suffix} takes piece {orbit.pieces[i]} to {np.round(target, 3).tolist()}, "
                    f"where orbit {orbit.name} has no piece (axis, order or cut do not fit the geometry)")
            src[j] = i
            twist[j] = _slot_shift(spec, orbit, i, j, rotation, turn, suffix)
        if orbit.orientations == 1:
            twist[:] = 0
        orbit_moves.append(OrbitMove(src, twist))
    return DerivedMove(turn.name + suffix, turn.name, power, turn.order, turn.axis, tuple(orbit_moves))


def _explicit_power(orbits, turn: TurnSpec, explicit: dict, power: int, suffix: str) -> DerivedMove:
    """The power of a move given as permutation + twist per orbit (orbits not named stay put)."""
    orbit_moves = []
    for orbit in orbits:
        n = len(orbit.pieces)
        one_src, one_twist = explicit.get(orbit.name, (np.arange(n), np.zeros(n, dtype=np.int64)))
        src, twist = np.arange(n), np.zeros(n, dtype=np.int64)
        for _ in range(power):  # (a * b): src = a.src[b.src], twist = a.twist[b.src] + b.twist
            src, twist = src[one_src], (twist[one_src] + one_twist) % orbit.orientations
        orbit_moves.append(OrbitMove(src, twist))
    return DerivedMove(turn.name + suffix, turn.name, power, turn.order, None, tuple(orbit_moves))


def _find_place(places: np.ndarray, target: np.ndarray) -> int | None:
    distances = np.linalg.norm(places - target, axis=1)
    j = int(np.argmin(distances))
    return j if distances[j] < TOLERANCE else None


def _slot_shift(spec, orbit: OrbitGeometry, i: int, j: int, rotation, turn, suffix) -> int:
    """d such that slot k of place i goes to slot (k + d) % m of place j."""
    stickers = len(orbit.slots[i])
    image_slots = []
    for face in orbit.slots[i]:
        turned = rotation @ spec.faces[face].normal
        match = [k for k, other in enumerate(orbit.slots[j])
                 if np.linalg.norm(spec.faces[other].normal - turned) < TOLERANCE]
        if not match:
            raise turn.field.error(
                f"turning {turn.name}{suffix} turns the {face} sticker of {orbit.pieces[i]} "
                f"onto no face of {orbit.pieces[j]} (axis or order do not fit the faces)")
        image_slots.append(match[0])
    shift = image_slots[0]
    if any(image_slots[k] != (k + shift) % stickers for k in range(stickers)):
        raise turn.field.error(f"turning {turn.name}{suffix} mirrors piece {orbit.pieces[i]}")
    return shift
