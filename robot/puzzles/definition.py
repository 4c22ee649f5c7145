"""The puzzle file format: parse and check a YAML puzzle definition (see docs/puzzles.md).

A puzzle is described by its geometry, the way robot/cube.py describes the
2x2x2 with FACE_FRAMES:

  faces:      name -> outward normal (and, for grid layouts, the net's up/right)
  orbits:     pieces named by the faces they carry stickers on (URF, UR, U...),
              with their orientation count; a piece's place is the sum of its
              faces' normals, its stickers are ordered reference face first,
              then clockwise seen from outside
  moves:      name -> axis (a face, a piece or a vector), order (2, 3 or 4) and
              cut: the pieces whose place p has p . axis > cut turn clockwise by
              360/order degrees seen from the axis tip
  rotations:  whole-puzzle rotations (axis and order; every piece turns)
  facelets:   the order of the stickers in a facelet string: {grid: 2|3} reads
              each face row-major on the net, or face -> list of pieces
  fixed_piece: optional; a piece the search keeps at home (puzzles without
              fixed centres: the state is taken up to whole-puzzle rotation)

Everything here only reads and checks the file; robot.puzzles.geometry turns
the result into permutations and orientation changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .source import Field, PuzzleFileError, read_source

POWER_SUFFIXES = {2: ((1, ""),), 3: ((1, ""), (2, "'")), 4: ((1, ""), (2, "2"), (3, "'"))}


@dataclass(frozen=True)
class Face:
    name: str
    normal: np.ndarray
    up: np.ndarray | None
    right: np.ndarray | None
    field: Field


@dataclass(frozen=True)
class OrbitSpec:
    name: str
    orientations: int
    pieces: tuple[str, ...]
    reference: tuple[str, ...]
    field: Field


@dataclass(frozen=True)
class TurnSpec:
    """A move or whole-puzzle rotation: turn the pieces with p . axis > cut, or given explicitly."""

    name: str
    axis: np.ndarray | None
    order: int
    cut: float | None  # None: every piece (a rotation)
    field: Field
    # orbit name -> (src, twist): new_perm[j] = perm[src[j]], new_ori[j] = ori[src[j]] + twist[j]
    explicit: dict | None = None


@dataclass(frozen=True)
class PuzzleSpec:
    name: str
    path: Path
    description: str
    faces: dict[str, Face]
    orbits: tuple[OrbitSpec, ...]
    moves: tuple[TurnSpec, ...]
    rotations: tuple[TurnSpec, ...]
    layout: tuple[tuple[str, str], ...]  # (face, piece) for each facelet, in string order
    fixed_piece: str | None
    root: Field

    def piece_faces(self) -> dict[str, str]:
        return {piece: piece for orbit in self.orbits for piece in orbit.pieces}


def load_spec(path) -> PuzzleSpec:
    """Parse and check a puzzle file; any problem raises PuzzleFileError naming file, line, key."""
    root = read_source(path)
    top = root.mapping(required=("name", "faces", "orbits", "moves", "facelets"),
                       optional=("description", "rotations", "fixed_piece"))
    faces = _faces(top["faces"])
    orbits = _orbits(top["orbits"], faces)
    pieces = {piece: orbit for orbit in orbits for piece in orbit.pieces}
    moves = _turns(top["moves"], faces, orbits, rotation=False)
    rotations = _turns(top["rotations"], faces, orbits, rotation=True) if "rotations" in top else ()
    names = [turn.name for turn in moves + rotations]
    for turn in moves + rotations:
        if names.count(turn.name) > 1:
            raise turn.field.error("a move and a rotation share this name")
    fixed = None
    if "fixed_piece" in top:
        fixed = top["fixed_piece"].text()
        if fixed not in pieces:
            raise top["fixed_piece"].error(f"{fixed!r} is not a piece of any orbit")
        if not rotations:
            raise top["fixed_piece"].error("a fixed piece needs whole-puzzle rotations to bring it home")
    layout = _layout(top["facelets"], faces, orbits)
    return PuzzleSpec(
        name=top["name"].text(), path=Path(path),
        description=top["description"].text() if "description" in top else "",
        faces=faces, orbits=orbits, moves=moves, rotations=rotations, layout=layout,
        fixed_piece=fixed, root=root,
    )


def _faces(field: Field) -> dict[str, Face]:
    faces = {}
    for name, face_field in field.mapping().items():
        if len(name) != 1 or not name.isalpha():
            raise face_field.error("a face name is one letter (pieces are named by their faces' letters)")
        entries = face_field.mapping(required=("normal",), optional=("up", "right"))
        normal = np.array(entries["normal"].vector())
        if not np.any(normal):
            raise entries["normal"].error("the normal must not be zero")
        up = np.array(entries["up"].vector()) if "up" in entries else None
        right = np.array(entries["right"].vector()) if "right" in entries else None
        for key, vector in (("up", up), ("right", right)):
            if vector is not None and abs(vector @ normal) > 1e-9:
                raise entries[key].error(f"{key} must lie in the face (perpendicular to its normal)")
        faces[name] = Face(name, normal, up, right, face_field)
    if len(faces) < 2:
        raise field.error("a puzzle needs at least two faces")
    return faces


def _orbits(field: Field, faces: dict[str, Face]) -> tuple[OrbitSpec, ...]:
    orbits: list[OrbitSpec] = []
    seen: dict[frozenset[str], str] = {}
    for name, orbit_field in field.mapping().items():
        entries = orbit_field.mapping(required=("orientations", "pieces"), optional=("reference",))
        orientations = entries["orientations"].integer(minimum=1, maximum=3)
        pieces = []
        for item in entries["pieces"].items():
            piece = item.text()
            unknown = [c for c in piece if c not in faces]
            if unknown:
                raise item.error(f"piece {piece!r}: {', '.join(unknown)} is not a face")
            if len(set(piece)) != len(piece):
                raise item.error(f"piece {piece!r} names a face twice")
            key = frozenset(piece)
            if key in seen:
                raise item.error(f"piece {piece!r} is the same place as {seen[key]!r}")
            seen[key] = piece
            stickers = len(piece)
            if stickers > 3:
                raise item.error(f"piece {piece!r} has {stickers} stickers; at most 3 are supported")
            if orientations not in (1, stickers):
                raise entries["orientations"].error(
                    f"piece {piece!r} has {stickers} stickers, so the orbit has {stickers} orientations (or 1)")
            pieces.append(piece)
        if not pieces:
            raise entries["pieces"].error("an orbit needs at least one piece")
        reference: tuple[str, ...] = ()
        if "reference" in entries:
            reference = tuple(item.text() for item in entries["reference"].items())
            for item, face in zip(entries["reference"].items(), reference):
                if face not in faces:
                    raise item.error(f"{face!r} is not a face")
        orbits.append(OrbitSpec(name, orientations, tuple(pieces), reference, orbit_field))
    return tuple(orbits)


def _axis(field: Field, faces, pieces) -> np.ndarray:
    if field.node is not None and field.node.id == "sequence":
        axis = np.array(field.vector())
    else:
        name = field.text()
        if name in faces:
            axis = faces[name].normal
        elif name in pieces:
            axis = sum(faces[c].normal for c in name)
        else:
            raise field.error(f"{name!r} is neither a face nor a piece (or give a vector [x, y, z])")
    if not np.any(axis):
        raise field.error("the axis must not be zero")
    return np.asarray(axis, dtype=float)


def _turns(field: Field, faces, orbits, rotation: bool) -> tuple[TurnSpec, ...]:
    pieces = {piece: orbit for orbit in orbits for piece in orbit.pieces}
    turns = []
    for name, turn_field in field.mapping().items():
        if any(c in "2'" for c in name):
            raise turn_field.error("a move name must not contain 2 or ' (they name the powers)")
        if "axis" not in turn_field.mapping():
            turns.append(_explicit_turn(name, turn_field, orbits))
            continue
        optional = () if rotation else ("cut",)
        entries = turn_field.mapping(required=("axis", "order"), optional=optional)
        order = entries["order"].integer(minimum=2, maximum=4)
        cut = None if rotation else (entries["cut"].number() if "cut" in entries else 0.0)
        turns.append(TurnSpec(name, _axis(entries["axis"], faces, pieces), order, cut, turn_field))
    if not turns:
        raise field.error("expected at least one entry")
    return tuple(turns)


def _explicit_turn(name: str, field: Field, orbits) -> TurnSpec:
    """A move given per orbit as Kociemba's cubie tables: the piece each place receives, and its twist.

    `corners: {permutation: [UBR, URF, ...], twist: [0, ...]}` means place j receives the piece from
    place permutation[j], its orientation raised by twist[j] (orbits not named stay put).
    """
    by_name = {orbit.name: orbit for orbit in orbits}
    entries = field.mapping(optional=tuple(by_name))
    if not entries:
        raise field.error("expected axis and order, or a permutation per orbit")
    explicit = {}
    for orbit_name, orbit_field in entries.items():
        orbit = by_name[orbit_name]
        parts = orbit_field.mapping(required=("permutation",), optional=("twist",))
        listed = [item.text() for item in parts["permutation"].items()]
        if sorted(listed) != sorted(orbit.pieces):
            raise parts["permutation"].error(
                f"must list each of the {len(orbit.pieces)} {orbit_name} places once: {' '.join(orbit.pieces)}")
        src = np.array([orbit.pieces.index(piece) for piece in listed])
        twist = np.zeros(len(src), dtype=np.int64)
        if "twist" in parts:
            items = parts["twist"].items()
            if len(items) != len(src):
                raise parts["twist"].error(f"expected {len(src)} numbers, one per place")
            twist = np.array([item.integer(minimum=0, maximum=orbit.orientations - 1) for item in items])
        explicit[orbit_name] = (src, twist)
    return TurnSpec(name, None, _order(explicit, orbits, field), None, field, explicit)


def _order(explicit: dict, orbits, field: Field) -> int:
    """How many applications of an explicit move give the identity (2, 3 or 4)."""
    modulus = {orbit.name: orbit.orientations for orbit in orbits}
    current = {name: (np.arange(len(src)), np.zeros(len(src), dtype=np.int64)) for name, (src, _) in explicit.items()}
    for power in range(1, 5):
        current = {name: (src[explicit[name][0]], (twist[explicit[name][0]] + explicit[name][1]) % modulus[name])
                   for name, (src, twist) in current.items()}
        if all(np.array_equal(src, np.arange(len(src))) and not twist.any() for src, twist in current.values()):
            if power == 1:
                raise field.error("this move changes nothing")
            return power
    raise field.error("applying this move 2, 3 or 4 times must give back the start (orders 2-4 only)")


def _layout(field: Field, faces, orbits) -> tuple[tuple[str, str], ...]:
    """(face, piece) of each facelet in string order; every sticker exactly once."""
    entries = field.mapping()
    if set(entries) == {"grid"}:
        size = entries["grid"].integer(minimum=2, maximum=3)
        layout = _grid_layout(entries["grid"], size, faces, orbits)
    else:
        layout = []
        for face, face_field in entries.items():
            if face not in faces:
                raise face_field.error(f"{face!r} is not a face (or use grid: N)")
            for item in face_field.items():
                piece = item.text()
                if not any(piece in orbit.pieces for orbit in orbits):
                    raise item.error(f"{piece!r} is not a piece of any orbit")
                if face not in piece:
                    raise item.error(f"piece {piece!r} has no sticker on face {face}")
                layout.append((face, piece))
    stickers = [(face, piece) for orbit in orbits for piece in orbit.pieces for face in piece]
    for sticker in stickers:
        if layout.count(sticker) != 1:
            how = "missing" if sticker not in layout else "listed twice"
            raise field.error(f"the sticker of {sticker[1]} on face {sticker[0]} is {how}")
    if len(layout) != len(stickers):
        raise field.error(f"{len(layout)} facelets listed for {len(stickers)} stickers")
    return tuple(layout)


def _grid_layout(field: Field, size: int, faces, orbits) -> list[tuple[str, str]]:
    """Each face row-major on its net: cell (row, col) is the piece at normal + up*u + right*v."""
    by_place = {}
    for orbit in orbits:
        for piece in orbit.pieces:
            place = tuple(np.round(sum(faces[c].normal for c in piece), 6))
            by_place[place] = piece
    steps = [1 - 2 * i / (size - 1) for i in range(size)]  # 1 .. -1
    layout = []
    for face in faces.values():
        if face.up is None or face.right is None:
            raise face.field.error("a grid layout needs up and right on every face")
        for u in steps:
            for v in reversed(steps):
                place = tuple(np.round(face.normal + face.up * u + face.right * v, 6))
                piece = by_place.get(place)
                if piece is None or face.name not in piece:
                    raise field.error(f"no piece at face {face.name} cell ({u:+g} up, {v:+g} right)")
                layout.append((face.name, piece))
    return layout


__all__ = ["PuzzleFileError", "PuzzleSpec", "load_spec", "POWER_SUFFIXES"]
