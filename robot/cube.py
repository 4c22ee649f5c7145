"""The 2x2x2 cube model: facelets, corners (CP/CO), moves and validation.

Everything else in the project uses this module and nothing else for cube facts.

Conventions (Kociemba's 2x2x2 layout):
  * Facelet strings have 24 symbols, faces in the order U R F D L B, each face
    row-major as drawn on the standard net: U1..U4 = 0..3, R = 4..7, F = 8..11,
    D = 12..15, L = 16..19, B = 20..23.  U is seen from above with B at the top,
    D from below with F at the top, the side faces with U at the top.
  * Corners in the order URF UFL ULB UBR DFR DLF DBL DRB.
  * cp[i] = which corner piece sits at position i; co[i] = which facelet of
    position i (0, 1, 2 in CORNER_FACELETS order: U/D facelet first, then
    clockwise) holds the piece's U/D-coloured sticker.
  * Moves multiply on the right: state * move.  (a*b).cp[i] = a.cp[b.cp[i]].

The facelet geometry is given once (FACE_FRAMES); the corner facelet table and
every move are derived from it, so they cannot disagree.

A 2x2x2 has no centres, so the colour scheme comes from the cube itself: see
`parse_facelets`.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from operator import itemgetter

import numpy as np

FACES = "URFDLB"
FACELET_COUNT = 24
CORNER_COUNT = 8
CORNER_NAMES = ("URF", "UFL", "ULB", "UBR", "DFR", "DLF", "DBL", "DRB")
DBL = CORNER_NAMES.index("DBL")
SOLVED_FACELETS = "".join(face * 4 for face in FACES)

# ---------------------------------------------------------------------------
# Geometry: axes x -> R, y -> U, z -> F.  For each face: its outward normal and
# the directions of "up" and "right" on the standard net.
_X, _Y, _Z = np.eye(3, dtype=int)
FACE_FRAMES = {
    #     normal  net-up  net-right
    "U": (_Y, -_Z, _X),
    "R": (_X, _Y, -_Z),
    "F": (_Z, _Y, _X),
    "D": (-_Y, _Z, _X),
    "L": (-_X, _Y, _Z),
    "B": (-_Z, _Y, -_X),
}


def facelet_name(index: int) -> str:
    """'U1'..'B4' for facelet index 0..23."""
    return f"{FACES[index // 4]}{index % 4 + 1}"


def facelet_index(name: str) -> int:
    return FACES.index(name[0]) * 4 + int(name[1]) - 1


def _facelet_geometry():
    """(cubie position, normal) of each of the 24 facelets."""
    geometry = []
    for face in FACES:
        normal, up, right = FACE_FRAMES[face]
        for row in range(2):
            for col in range(2):
                position = normal + up * (1 - 2 * row) + right * (2 * col - 1)
                geometry.append((tuple(int(v) for v in position), tuple(int(v) for v in normal)))
    return geometry


_GEOMETRY = _facelet_geometry()
_INDEX_OF_GEOMETRY = {g: i for i, g in enumerate(_GEOMETRY)}
_CORNER_POSITIONS = [
    tuple(int(v) for v in np.sum([FACE_FRAMES[f][0] for f in name], axis=0)) for name in CORNER_NAMES
]


def _corner_facelets():
    """Facelets of each corner position: U/D one first, then clockwise seen from outside."""
    table = []
    for position in _CORNER_POSITIONS:
        stickers = [i for i, (p, _) in enumerate(_GEOMETRY) if p == position]
        first = next(i for i in stickers if FACES[i // 4] in "UD")
        a, b = [i for i in stickers if i != first]
        # Clockwise seen from outside <=> det(n_first, n_second, n_third) == -1.
        normals = [np.array(_GEOMETRY[i][1]) for i in (first, a, b)]
        if round(np.linalg.det(np.array(normals))) != -1:
            a, b = b, a
        table.append((first, a, b))
    return tuple(table)


CORNER_FACELETS = _corner_facelets()


# ---------------------------------------------------------------------------
# Errors: one class per kind of invalid cube, each naming facelets and corners.


class CubeError(ValueError):
    """Base class of every invalid-cube error."""

    def __init__(self, message: str, facelets=(), corners=()):
        super().__init__(message)
        self.facelets = tuple(facelets)
        self.corners = tuple(corners)

    def __str__(self):
        return f"{type(self).__name__}: {self.args[0]}"


class LengthError(CubeError):
    """The facelet string does not have 24 symbols."""


class ColourCountError(CubeError):
    """Not exactly 6 colours, or a colour not exactly 4 times."""


class ImpossibleCornerError(CubeError):
    """A corner whose three colours cannot occur together."""


class MirroredCornerError(CubeError):
    """A corner with the right colours in the wrong handedness."""


class DuplicateCornerError(CubeError):
    """The same corner piece appears twice."""


class TwistedCornerError(CubeError):
    """Corner orientations do not sum to 0 mod 3."""


class MoveError(ValueError):
    """A move sequence that cannot be parsed."""


# ---------------------------------------------------------------------------
# Cubie level.


@dataclass(frozen=True)
class CubieCube:
    """Corner permutation and orientation (Kociemba's convention)."""

    cp: tuple = tuple(range(CORNER_COUNT))
    co: tuple = (0,) * CORNER_COUNT

    def __mul__(self, other: "CubieCube") -> "CubieCube":
        cp = tuple(self.cp[j] for j in other.cp)
        co = tuple((self.co[j] + t) % 3 for j, t in zip(other.cp, other.co))
        return CubieCube(cp, co)

    def apply(self, moves) -> "CubieCube":
        """This state after a move sequence (a string or a list of move names)."""
        cube = self
        for name in parse_moves(moves) if isinstance(moves, str) else moves:
            cube = cube * MOVES[name]
        return cube

    def canonical(self) -> "CubieCube":
        """The same cube relabelled so that the piece at DBL is DBL, untwisted: a whole-cube rotation
        changes nothing the robot does (a 2x2x2's colours define solved), so the solver works on these
        3,674,160 representatives."""
        rotation = ROTATIONS[ROTATION_FIXING_DBL[self.cp[DBL]][self.co[DBL]]]
        return rotation * self

    def is_solved(self) -> bool:
        """Solved in any of the 24 orientations."""
        return self.canonical() == SOLVED

    def to_facelets(self, colours: str = FACES) -> str:
        """Facelet string; `colours` names the U R F D L B colours."""
        out = [""] * FACELET_COUNT
        for position, facelets in enumerate(CORNER_FACELETS):
            piece_colours = [colours[FACES.index(f)] for f in _PIECE_FACES[self.cp[position]]]
            twist = self.co[position]
            for k, facelet in enumerate(facelets):
                out[facelet] = piece_colours[(k - twist) % 3]
        return "".join(out)


SOLVED = CubieCube()
# Face letters of each corner piece in CORNER_FACELETS order (U/D first, clockwise).
_PIECE_FACES = tuple(
    tuple(FACES[f // 4] for f in facelets) for facelets in CORNER_FACELETS
)


def _cubie_from_standard_facelets(facelets: str) -> CubieCube:
    """CubieCube of a facelet string coloured with the letters URFDLB (trusted input)."""
    cp, co = [], []
    for facelets_of_corner in CORNER_FACELETS:
        colours = [facelets[i] for i in facelets_of_corner]
        twist = next(k for k, c in enumerate(colours) if c in "UD")
        rotated = tuple(colours[(k + twist) % 3] for k in range(3))
        cp.append(_PIECE_FACES.index(rotated))
        co.append(twist)
    return CubieCube(tuple(cp), tuple(co))


# ---------------------------------------------------------------------------
# Moves, derived from the geometry.


def _rotation_matrix(axis, quarter_turns_clockwise: int):
    """Rotation by 90 degrees * n clockwise seen from the tip of `axis`."""
    a = np.array(axis)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    # A -90 degree rotation about unit axis a: R = a a^T - K (cos=0, sin=-1).
    clockwise = np.outer(a, a) - k
    result = np.eye(3, dtype=int)
    for _ in range(quarter_turns_clockwise % 4):
        result = clockwise @ result
    return result


def _facelet_permutation(axis, layer_test, quarter_turns: int):
    """perm with new[i] = old[perm[i]] for turning the stickers selected by layer_test."""
    rot = _rotation_matrix(axis, quarter_turns)
    perm = list(range(FACELET_COUNT))
    for source, (position, normal) in enumerate(_GEOMETRY):
        if layer_test(np.array(position)):
            target = _INDEX_OF_GEOMETRY[
                (tuple(int(v) for v in rot @ position), tuple(int(v) for v in rot @ normal))
            ]
            perm[target] = source
    return tuple(perm)


def _build_moves():
    facelet_moves = {}
    for face in FACES:
        normal = FACE_FRAMES[face][0]
        for suffix, quarters in (("", 1), ("2", 2), ("'", 3)):
            facelet_moves[face + suffix] = _facelet_permutation(
                normal, lambda p, n=normal: int(p @ n) > 0, quarters
            )
    for name, face in (("x", "R"), ("y", "U"), ("z", "F")):
        for suffix, quarters in (("", 1), ("2", 2), ("'", 3)):
            facelet_moves[name + suffix] = _facelet_permutation(
                FACE_FRAMES[face][0], lambda p: True, quarters
            )
    cubie_moves = {
        name: _cubie_from_standard_facelets(apply_facelet_permutation(SOLVED_FACELETS, perm))
        for name, perm in facelet_moves.items()
    }
    return facelet_moves, cubie_moves


def apply_facelet_permutation(facelets: str, perm) -> str:
    return "".join(itemgetter(*perm)(facelets))


FACELET_MOVES, MOVES = _build_moves()
MOVE_NAMES = tuple(MOVES)
_MOVE_TOKEN = re.compile(r"^([URFDLBxyz])(2|'|)$")


def parse_moves(text: str) -> list[str]:
    """'R U2 F\\' x' -> ['R', 'U2', "F'", 'x'].  R2' and ’ are accepted."""
    moves = []
    for position, token in enumerate(text.replace("\u2019", "'").split(), start=1):
        token = token.replace("2'", "2")
        if not _MOVE_TOKEN.match(token):
            raise MoveError(
                f"move {position} {token!r} is not a move (use U R F D L B x y z with ' or 2)"
            )
        moves.append(token)
    return moves


def apply_moves(facelets: str, moves) -> str:
    """Facelet string after a move sequence (string or list of names)."""
    for name in parse_moves(moves) if isinstance(moves, str) else moves:
        facelets = apply_facelet_permutation(facelets, FACELET_MOVES[name])
    return facelets


# The 24 whole-cube rotations, and for each (piece at DBL, its twist) the one
# whose relabelling puts DBL at DBL untwisted (see CubieCube.canonical).
def _build_rotations():
    rotations = [SOLVED]
    frontier = [SOLVED]
    while frontier:
        nxt = []
        for r in frontier:
            for g in ("x", "y", "z"):
                candidate = r * MOVES[g]
                if candidate not in rotations:
                    rotations.append(candidate)
                    nxt.append(candidate)
        frontier = nxt
    assert len(rotations) == 24
    fixing: list[list[int | None]] = [[None] * 3 for _ in range(CORNER_COUNT)]
    for index, r in enumerate(rotations):
        for piece in range(CORNER_COUNT):
            if r.cp[piece] == DBL:
                fixing[piece][(-r.co[piece]) % 3] = index
    assert all(v is not None for row in fixing for v in row)
    return tuple(rotations), tuple(tuple(row) for row in fixing)


ROTATIONS, ROTATION_FIXING_DBL = _build_rotations()


# ---------------------------------------------------------------------------
# Facelet strings with any six colour symbols.


@dataclass(frozen=True)
class ParsedCube:
    """A validated facelet string.

    cubie: the state in the robot frame, relabelled canonically (DBL piece at
    DBL, untwisted).  colours: the symbol used for each of U R F D L B under
    that labelling, so `cubie.to_facelets(colours) == facelets`.
    """

    facelets: str
    cubie: CubieCube
    colours: str


def _positions(facelets: str, colour: str) -> list[str]:
    """The facelet names (U1..B4) where `colour` is."""
    return [facelet_name(i) for i, x in enumerate(facelets) if x == colour]


def _corner_text(position: int, facelets: str) -> str:
    names = ", ".join(facelet_name(i) for i in CORNER_FACELETS[position])
    colours = "".join(facelets[i] for i in CORNER_FACELETS[position])
    return f"corner {CORNER_NAMES[position]} ({names} = {colours})"


def _facelets_of(positions):
    return [facelet_name(i) for p in positions for i in CORNER_FACELETS[p]]


def parse_facelets(facelets: str) -> ParsedCube:
    """Validate a facelet string read in the robot frame and return its state.

    Any 6 symbols may name the colours; the six faces may be written apart, separated by whitespace.
    The scheme comes from the cube:
    colours that never share a corner are opposite, and the corner at DBL names
    D, B and L; every other corner must then agree in handedness.  Raises a
    CubeError subclass naming the facelets and corners involved.
    """
    if not isinstance(facelets, str):
        raise LengthError(f"expected a string of 24 colour symbols, got {type(facelets).__name__}")
    faces = facelets.split()  # faces written apart ("wwww rrrr ..."): one cube
    if len(faces) == len(FACES) and all(len(face) == FACELET_COUNT // len(FACES) for face in faces):
        facelets = "".join(faces)
    if len(facelets) != FACELET_COUNT:
        spaces = sum(c.isspace() for c in facelets)
        raise LengthError(
            f"expected 24 facelets (U1..B4), got {len(facelets)}"
            + (f" characters including {spaces} space{'s' if spaces != 1 else ''}" if spaces else "")
            + f": {facelets!r}"
        )
    counts = {c: facelets.count(c) for c in dict.fromkeys(facelets)}
    if len(counts) != 6:
        odd = {c for c, n in counts.items() if n != 4}  # the stray symbol (a typo) is among these: name where

        def entry(c):
            return f"{c!r} x{counts[c]}" + (" at " + " ".join(_positions(facelets, c)) if c in odd else "")

        raise ColourCountError(
            f"expected exactly 6 colours, found {len(counts)}: " + ", ".join(entry(c) for c in counts),
            facelets=[name for c in odd for name in _positions(facelets, c)],
        )
    wrong = {c: n for c, n in counts.items() if n != 4}
    if wrong:
        where = [facelet_name(i) for i, c in enumerate(facelets) if c in wrong]
        raise ColourCountError(
            "; ".join(
                f"colour {c!r} appears {n} times (expected 4): at " + " ".join(_positions(facelets, c))
                for c, n in wrong.items()
            ),
            facelets=where,
        )
    corner_colours = [[facelets[i] for i in f] for f in CORNER_FACELETS]
    for position, colours in enumerate(corner_colours):
        if len(set(colours)) < 3:
            raise ImpossibleCornerError(
                f"{_corner_text(position, facelets)} has two stickers of one colour",
                facelets=_facelets_of([position]),
                corners=[CORNER_NAMES[position]],
            )
    opposite = _opposite_colours(corner_colours, list(counts))
    for position, colours in enumerate(corner_colours):
        for a, b in itertools.combinations(colours, 2):
            if opposite[a] == b:
                raise ImpossibleCornerError(
                    f"{_corner_text(position, facelets)} has opposite colours {a!r} and {b!r} "
                    "(they never share a corner elsewhere on this cube)",
                    facelets=_facelets_of([position]),
                    corners=[CORNER_NAMES[position]],
                )
    # Scheme from the corner at DBL: its facelets D3, B4, L3 name D, B, L.
    d, b, l_ = corner_colours[DBL]
    names = {d: "D", b: "B", l_: "L", opposite[d]: "U", opposite[b]: "F", opposite[l_]: "R"}
    scheme = "".join(next(c for c, n in names.items() if n == face) for face in FACES)
    # Handedness: each corner's clockwise colour order must be a real piece.
    mirrored = []
    cp, co = [], []
    for position, colours in enumerate(corner_colours):
        faces = [names[c] for c in colours]
        twist = next(k for k, f in enumerate(faces) if f in "UD")
        rotated = tuple(faces[(k + twist) % 3] for k in range(3))
        if rotated not in _PIECE_FACES:
            mirrored.append(position)
            continue
        cp.append(_PIECE_FACES.index(rotated))
        co.append(twist)
    if mirrored:
        if len(mirrored) > 4:  # the DBL corner itself is the odd one out
            mirrored = [p for p in range(CORNER_COUNT) if p not in mirrored]
        raise MirroredCornerError(
            "; ".join(_corner_text(p, facelets) for p in mirrored)
            + ": right colours in mirror-image order (two stickers of the corner swapped)",
            facelets=_facelets_of(mirrored),
            corners=[CORNER_NAMES[p] for p in mirrored],
        )
    for piece in range(CORNER_COUNT):
        places = [p for p in range(CORNER_COUNT) if cp[p] == piece]
        if len(places) > 1:
            raise DuplicateCornerError(
                " and ".join(_corner_text(p, facelets) for p in places)
                + " are the same corner piece",
                facelets=_facelets_of(places),
                corners=[CORNER_NAMES[p] for p in places],
            )
    twist_sum = sum(co) % 3
    if twist_sum:
        twisted = [p for p in range(CORNER_COUNT) if co[p]]
        direction = "clockwise" if twist_sum == 1 else "anticlockwise"
        raise TwistedCornerError(
            f"corner twists sum to {twist_sum} (mod 3): a corner is twisted {direction} in place; "
            "corners not in home orientation: "
            + ", ".join(
                f"{CORNER_NAMES[p]} (twist {co[p]}, {', '.join(facelet_name(i) for i in CORNER_FACELETS[p])})"
                for p in twisted
            ),
            facelets=_facelets_of(twisted),
            corners=[CORNER_NAMES[p] for p in twisted],
        )
    return ParsedCube(facelets, CubieCube(tuple(cp), tuple(co)), scheme)


def _opposite_colours(corner_colours, colours) -> dict:
    """Pair the 6 colours into the 3 opposite pairs that share fewest corners."""
    together = {frozenset(pair): 0 for pair in itertools.combinations(colours, 2)}
    for c in corner_colours:
        for pair in itertools.combinations(set(c), 2):
            together[frozenset(pair)] += 1

    def matchings(rest):
        if not rest:
            yield []
            return
        first = rest[0]
        for other in rest[1:]:
            remaining = [c for c in rest[1:] if c != other]
            for m in matchings(remaining):
                yield [(first, other)] + m

    def score(matching):
        # Corners with one colour of each opposite pair, and of those the
        # largest group sharing one handedness (a real cube has all 8 in one).
        axis = {}
        for k, (a, b) in enumerate(matching):
            axis[a], axis[b] = (k, 1), (k, -1)
        valid = [c for c in corner_colours if len({axis[x][0] for x in c}) == 3]
        hands = [_parity([axis[x][0] for x in c]) * axis[c[0]][1] * axis[c[1]][1] * axis[c[2]][1] for c in valid]
        same_hand = max(hands.count(1), hands.count(-1))
        shared = sum(together[frozenset(p)] for p in matching)
        return (-len(valid), -same_hand, shared)

    best = min(matchings(list(colours)), key=score)
    opposite = {}
    for a, b in best:
        opposite[a], opposite[b] = b, a
    return opposite


def _parity(order) -> int:
    """+1 for an even permutation of (0, 1, 2), -1 for an odd one."""
    return 1 if tuple(order) in ((0, 1, 2), (1, 2, 0), (2, 0, 1)) else -1


def random_state(rng) -> CubieCube:
    """A uniformly random canonical state (rng: numpy Generator)."""
    others = [p for p in range(CORNER_COUNT) if p != DBL]
    perm = list(rng.permutation(others))
    cp = perm[:DBL] + [DBL] + perm[DBL:]
    co = [int(v) for v in rng.integers(0, 3, CORNER_COUNT)]
    co[DBL] = 0
    co[-1] = (-sum(co[:-1])) % 3
    return CubieCube(tuple(int(v) for v in cp), tuple(co))


def random_placed_state(rng) -> CubieCube:
    """A random state put into the robot in a random orientation (the simulation's scrambled cube)."""
    return random_state(rng) * ROTATIONS[int(rng.integers(24))]
