"""The 3x3x3 cube model: facelets, cubies (CP/CO/EP/EO), moves, symmetries, validation.

Conventions (Kociemba's 3x3x3 layout, the same net as robot/cube.py):
  * Facelet strings have 54 symbols, faces U R F D L B, each face row-major on
    the standard net (U1..U9 = 0..8, R1..R9 = 9..17, ...); the centre of a face
    (U5, R5, ...) names that face's colour.
  * Corners URF UFL ULB UBR DFR DLF DBL DRB; edges UR UF UL UB DR DF DL DB FR FL BL BR.
  * cp[i]/ep[i] = which piece sits at position i; co[i] = which facelet of the
    position (U/D facelet first, then clockwise) holds the piece's U/D sticker;
    eo[i] = 1 when the piece's reference sticker (U/D, else F/B) is not on the
    position's reference facelet.
  * Moves multiply on the right: (a*b).cp[i] = a.cp[b.cp[i]].

Geometry (sticker positions and normals) comes from robot.cube.FACE_FRAMES;
pieces, moves and the 16 symmetries that keep the U-D axis are derived from it.
Everything here works on numpy arrays of many cubes at once (shape (N, 8) or
(N, 12)); a single cube is N = 1.
"""

from __future__ import annotations

import functools
import itertools
import re

import numpy as np

from ..cube import FACE_FRAMES, FACES, CubeError, MoveError, _rotation_matrix
from ..puzzles import load_puzzle

FACELET_COUNT = 54
CORNER_NAMES = ("URF", "UFL", "ULB", "UBR", "DFR", "DLF", "DBL", "DRB")
EDGE_NAMES = ("UR", "UF", "UL", "UB", "DR", "DF", "DL", "DB", "FR", "FL", "BL", "BR")
SOLVED_FACELETS = "".join(face * 9 for face in FACES)
# Moves in table order: index = 3 * face + (0: quarter clockwise, 1: half, 2: quarter anticlockwise).
MOVE_NAMES = tuple(f + s for f in FACES for s in ("", "2", "'"))
_MOVE_TOKEN = re.compile(r"^([URFDLB])(2|'|)$")


def facelet_name(index: int) -> str:
    return f"{FACES[index // 9]}{index % 9 + 1}"


def _geometry():
    """(cubie position, normal) of each of the 54 facelets."""
    out = []
    for face in FACES:
        normal, up, right = FACE_FRAMES[face]
        for row in range(3):
            for col in range(3):
                p = normal + up * (1 - row) + right * (col - 1)
                out.append((tuple(int(v) for v in p), tuple(int(v) for v in normal)))
    return out


GEOMETRY = _geometry()
_INDEX = {g: i for i, g in enumerate(GEOMETRY)}
_NORMAL_FACE = {tuple(int(v) for v in FACE_FRAMES[f][0]): k for k, f in enumerate(FACES)}


def _piece_facelets(names, ud_first):
    table = []
    for name in names:
        pos = tuple(int(v) for v in np.sum([FACE_FRAMES[f][0] for f in name], axis=0))
        stickers = [i for i, (p, _) in enumerate(GEOMETRY) if p == pos]
        first = next((i for i in stickers if FACES[i // 9] in ud_first[0]),
                     next((i for i in stickers if FACES[i // 9] in ud_first[1]), None))
        rest = [i for i in stickers if i != first]
        if len(rest) == 2:  # corners: clockwise seen from outside <=> det == -1
            normals = np.array([GEOMETRY[i][1] for i in (first, *rest)])
            if round(np.linalg.det(normals)) != -1:
                rest.reverse()
        table.append((first, *rest))
    return tuple(table)


CORNER_FACELETS = _piece_facelets(CORNER_NAMES, ("UD", "UD"))
EDGE_FACELETS = _piece_facelets(EDGE_NAMES, ("UD", "FB"))
# Face index (0..5 in URFDLB) of each piece's stickers, in its facelet order.
CORNER_COLOURS = tuple(tuple(f // 9 for f in fs) for fs in CORNER_FACELETS)
EDGE_COLOURS = tuple(tuple(f // 9 for f in fs) for fs in EDGE_FACELETS)

_CF = np.array(CORNER_FACELETS)
_EF = np.array(EDGE_FACELETS)


@functools.cache
def _engine():
    """The puzzle engine's 3x3x3 (the same layout and piece conventions: tests/test_puzzles.py)."""
    return load_puzzle("3x3x3")


def corners_from_colours(colours: np.ndarray):
    """(cp, co, ok) of (N, 54) face-index arrays; ok False where a corner is not a real piece."""
    return _engine().decode_orbit(colours, "corners")


def edges_from_colours(colours: np.ndarray):
    return _engine().decode_orbit(colours, "edges")


def colours_from_cubies(cp, co, ep, eo) -> np.ndarray:
    """(N, 54) face indices of cubie arrays (centres in place)."""
    n = len(cp)
    out = np.empty((n, FACELET_COUNT), dtype=np.int8)
    out[:, [9 * f + 4 for f in range(6)]] = np.arange(6)
    cc = np.array(CORNER_COLOURS)
    ec = np.array(EDGE_COLOURS)
    for k in range(3):
        out[:, _CF[:, k]] = cc[cp, (k - co) % 3]
    for k in range(2):
        out[:, _EF[:, k]] = ec[ep, (k - eo) % 2]
    return out


def _take(a, idx):
    """a[..., idx] row by row, for arrays of one cube (k,) or many (N, k)."""
    if a.ndim == 1:
        return a[idx]
    if idx.ndim == 1:
        return a[:, idx]
    return np.take_along_axis(a, idx, axis=1)


def multiply(a, b):
    """a * b for cubie tuples (cp, co, ep, eo): arrays of one cube (k,) or many (N, k)."""
    acp, aco, aep, aeo = a
    bcp, bco, bep, beo = b
    return (_take(acp, bcp), (_take(aco, bcp) + bco) % 3, _take(aep, bep), (_take(aeo, bep) + beo) % 2)


# ---------------------------------------------------------------------------
# Moves and symmetries as facelet maps (derived from the geometry).


def _facelet_map(matrix, layer_test):
    """perm with new[i] = old[perm[i]] after moving the selected stickers by `matrix`."""
    perm = list(range(FACELET_COUNT))
    for source, (p, n) in enumerate(GEOMETRY):
        if layer_test(np.array(p)):
            target = _INDEX[(tuple(int(v) for v in matrix @ p), tuple(int(v) for v in matrix @ n))]
            perm[target] = source
    return np.array(perm)


SOLVED_COLOURS = np.repeat(np.arange(6, dtype=np.int8), 9)


def _move_cubies():
    cp, co, ep, eo = [], [], [], []
    for face in FACES:
        normal = FACE_FRAMES[face][0]
        for quarters in (1, 2, 3):
            perm = _facelet_map(_rotation_matrix(normal, quarters), lambda p, n=normal: int(p @ n) > 0)
            colours = SOLVED_COLOURS[perm][None]
            a, b, _ = corners_from_colours(colours)
            c, d, _ = edges_from_colours(colours)
            cp.append(a[0]); co.append(b[0]); ep.append(c[0]); eo.append(d[0])
    return tuple(np.array(x, dtype=np.int64) for x in (cp, co, ep, eo))


# MOVES[k][i]: k-th component (cp, co, ep, eo) of move i (MOVE_NAMES order).
MOVES = _move_cubies()


def move(index: int):
    return tuple(part[index] for part in MOVES)


def matrix_group(generators) -> list:
    """Every product of the 3x3 integer `generators` (the group they generate), identity first."""
    group = [np.eye(3, dtype=int)]
    frontier = list(group)
    while frontier:
        new = []
        for m in frontier:
            for g in generators:
                c = g @ m
                if not any((c == x).all() for x in group):
                    group.append(c)
                    new.append(c)
        frontier = new
    return group


def _symmetry_matrices():
    """The 16 symmetries keeping the U-D axis: quarter turns about U, half turns about F, the L-R mirror."""
    group = matrix_group([_rotation_matrix(FACE_FRAMES["U"][0], 1), _rotation_matrix(FACE_FRAMES["F"][0], 2),
                          np.diag([-1, 1, 1])])
    assert len(group) == 16
    return group


SYMMETRIES = _symmetry_matrices()
N_SYM = 16
# For each symmetry: where each sticker goes, and which face each face's colour becomes.
_SYM_STICKERS = np.array([_facelet_map(m, lambda p: True).argsort() for m in SYMMETRIES])
_SYM_FACES = np.array([[_NORMAL_FACE[tuple(int(v) for v in m @ FACE_FRAMES[f][0])] for f in FACES]
                       for m in SYMMETRIES])


def conjugate_colours(colours: np.ndarray, sym: int) -> np.ndarray:
    """The cube seen through symmetry `sym`: stickers moved and recoloured so solved stays solved.
    Mirror symmetries map legal cubes to legal cubes this way (no mirror-image orientation bookkeeping),
    and moves to moves, so distances are unchanged."""
    out = np.empty_like(colours)
    out[:, _SYM_STICKERS[sym]] = _SYM_FACES[sym][colours]
    return out


def rotate_colours(colours: np.ndarray, matrix) -> np.ndarray:
    """The cube (N, 54 face indices) after a whole-cube rotation by `matrix`, recoloured so that
    the centres read U R F D L B again: the same state seen along another axis."""
    stickers, faces = _rotation_maps(tuple(map(tuple, np.asarray(matrix).tolist())))
    out = np.empty_like(colours)
    out[:, stickers] = faces[colours]
    return out


@functools.lru_cache(maxsize=None)
def _rotation_maps(matrix: tuple):
    """(where each sticker goes, which face each face's colour becomes) for a rotation."""
    rotation = np.array(matrix)
    stickers = _facelet_map(rotation, lambda p: True).argsort()
    faces = np.array([_NORMAL_FACE[tuple(int(v) for v in rotation @ FACE_FRAMES[f][0])] for f in FACES])
    return stickers, faces


def rotated_face(face: int, matrix) -> int:
    """Index (URFDLB) of the face that `face` becomes under the rotation `matrix`."""
    return _NORMAL_FACE[tuple(int(v) for v in np.asarray(matrix) @ FACE_FRAMES[FACES[face]][0])]


def inverse(state):
    """The inverse cube: multiply(state, inverse(state)) is solved."""
    cp, co, ep, eo = (np.asarray(x) for x in state)
    icp, iep = np.argsort(cp), np.argsort(ep)
    return icp, (-co[icp]) % 3, iep, (-eo[iep]) % 2


def inverse_moves(moves):
    """The move sequence that undoes `moves` (move indices)."""
    return [3 * (m // 3) + 2 - m % 3 for m in reversed(moves)]


# ---------------------------------------------------------------------------
# Move sequences.


def parse_moves(text: str) -> list[int]:
    """'R U2 F\\'' -> move indices.  R2' and the typographic apostrophe are accepted."""
    out = []
    for position, token in enumerate(text.replace("\u2019", "'").split(), start=1):
        token = token.replace("2'", "2")
        if not _MOVE_TOKEN.match(token):
            raise MoveError(f"move {position} {token!r} is not a 3x3x3 face move (use U R F D L B with ' or 2)")
        out.append(MOVE_NAMES.index(token))
    return out


def format_moves(moves) -> str:
    return " ".join(MOVE_NAMES[m] for m in moves)


def solved():
    return (np.arange(8), np.zeros(8, dtype=np.int64), np.arange(12), np.zeros(12, dtype=np.int64))


def apply(state, moves):
    for m in moves:
        state = multiply(state, move(m))
    return state


def to_facelets(state, colours: str = FACES) -> str:
    faces = colours_from_cubies(*(np.asarray(x)[None] for x in state))[0]
    return "".join(colours[f] for f in faces)


def random_state(rng):
    """A uniformly random solvable cube (rng: numpy Generator)."""
    cp = rng.permutation(8)
    ep = rng.permutation(12)
    if _parity(cp) != _parity(ep):
        ep[[0, 1]] = ep[[1, 0]]
    co = rng.integers(0, 3, 8)
    co[7] = (-co[:7].sum()) % 3
    eo = rng.integers(0, 2, 12)
    eo[11] = eo[:11].sum() % 2
    return cp, co, ep, eo


def _parity(perm) -> int:
    perm = list(perm)
    return sum(1 for i, j in itertools.combinations(range(len(perm)), 2) if perm[i] > perm[j]) % 2


# ---------------------------------------------------------------------------
# Validation: one named error per problem.


class Cube3Error(CubeError):
    """Base class of every invalid-3x3x3 error."""

    def __init__(self, message, facelets=(), corners=(), edges=()):
        super().__init__(message, facelets=facelets, corners=corners)
        self.edges = tuple(edges)


class LengthError(Cube3Error):
    """Not 54 symbols."""


class ColourCountError(Cube3Error):
    """Not 6 colours, or a colour not exactly 9 times."""


class CentreError(Cube3Error):
    """The centres do not show 6 different colours."""


class ImpossibleCornerError(Cube3Error):
    """Three colours that no corner piece has (or in mirror order)."""


class ImpossibleEdgeError(Cube3Error):
    """Two colours that no edge piece has."""


class DuplicateCornerError(Cube3Error):
    """The same corner piece twice."""


class DuplicateEdgeError(Cube3Error):
    """The same edge piece twice."""


class FlippedEdgeError(Cube3Error):
    """Edge orientations do not sum to 0 mod 2."""


class TwistedCornerError(Cube3Error):
    """Corner orientations do not sum to 0 mod 3."""


class ParityError(Cube3Error):
    """Corner and edge permutations of different parity (two pieces swapped)."""


def _piece_text(kind, names, facelets_table, position, text):
    where = ", ".join(facelet_name(i) for i in facelets_table[position])
    shown = "".join(text[i] for i in facelets_table[position])
    return f"{kind} {names[position]} ({where} = {shown})"


def _names(table, positions):
    return [facelet_name(i) for p in positions for i in table[p]]


def parse_facelets(text: str):
    """Validate a 54-symbol facelet string; return (cubie state, colour symbols of U R F D L B).

    Any 6 symbols may be used; the centres say which is which.  Raises a
    Cube3Error subclass naming the facelets and pieces involved.
    """
    if not isinstance(text, str) or len(text) != FACELET_COUNT:
        got = f"{len(text)}" if isinstance(text, str) else type(text).__name__
        raise LengthError(f"expected 54 facelets (U1..B9), got {got}: {text!r}")
    counts = {c: text.count(c) for c in dict.fromkeys(text)}
    if len(counts) != 6:
        raise ColourCountError(f"expected exactly 6 colours, found {len(counts)}: "
                               + ", ".join(f"{c!r} x{n}" for c, n in counts.items()))
    wrong = {c: n for c, n in counts.items() if n != 9}
    if wrong:
        raise ColourCountError(
            "; ".join(f"colour {c!r} appears {n} times (expected 9): at "
                      + " ".join(facelet_name(i) for i, x in enumerate(text) if x == c) for c, n in wrong.items()),
            facelets=[facelet_name(i) for i, c in enumerate(text) if c in wrong])
    centres = "".join(text[9 * f + 4] for f in range(6))
    if len(set(centres)) != 6:
        raise CentreError(
            f"unknown centre layout: centres U5 R5 F5 D5 L5 B5 = {centres}; each face's centre must be a different colour",
            facelets=[f"{face}5" for face in FACES])
    colours = np.array([[centres.index(c) for c in text]], dtype=np.int8)
    cp, co, ok = corners_from_colours(colours)
    cp, co, ok = cp[0], co[0], ok[0]
    bad = [p for p in range(8) if not ok[p]]
    if bad:
        raise ImpossibleCornerError(
            "; ".join(_piece_text("corner", CORNER_NAMES, CORNER_FACELETS, p, text) for p in bad)
            + ": no corner piece has these colours in this clockwise order",
            facelets=_names(CORNER_FACELETS, bad), corners=[CORNER_NAMES[p] for p in bad])
    ep, eo, ok = edges_from_colours(colours)
    ep, eo, ok = ep[0], eo[0], ok[0]
    bad = [p for p in range(12) if not ok[p]]
    if bad:
        raise ImpossibleEdgeError(
            "; ".join(_piece_text("edge", EDGE_NAMES, EDGE_FACELETS, p, text) for p in bad)
            + ": no edge piece has these two colours",
            facelets=_names(EDGE_FACELETS, bad), edges=[EDGE_NAMES[p] for p in bad])
    for piece in range(8):
        where = [p for p in range(8) if cp[p] == piece]
        if len(where) > 1:
            raise DuplicateCornerError(
                " and ".join(_piece_text("corner", CORNER_NAMES, CORNER_FACELETS, p, text) for p in where)
                + f" are the same corner piece ({CORNER_NAMES[piece]})",
                facelets=_names(CORNER_FACELETS, where), corners=[CORNER_NAMES[p] for p in where])
    for piece in range(12):
        where = [p for p in range(12) if ep[p] == piece]
        if len(where) > 1:
            raise DuplicateEdgeError(
                " and ".join(_piece_text("edge", EDGE_NAMES, EDGE_FACELETS, p, text) for p in where)
                + f" are the same edge piece ({EDGE_NAMES[piece]})",
                facelets=_names(EDGE_FACELETS, where), edges=[EDGE_NAMES[p] for p in where])
    if eo.sum() % 2:
        flipped = [p for p in range(12) if eo[p]]
        raise FlippedEdgeError(
            "one edge is flipped in place (edge flips sum to 1 mod 2); edges not in home orientation: "
            + ", ".join(_piece_text("edge", EDGE_NAMES, EDGE_FACELETS, p, text) for p in flipped),
            facelets=_names(EDGE_FACELETS, flipped), edges=[EDGE_NAMES[p] for p in flipped])
    twist = int(co.sum() % 3)
    if twist:
        twisted = [p for p in range(8) if co[p]]
        direction = "clockwise" if twist == 1 else "anticlockwise"
        raise TwistedCornerError(
            f"corner twists sum to {twist} (mod 3): a corner is twisted {direction} in place; corners not in "
            "home orientation: " + ", ".join(
                f"{_piece_text('corner', CORNER_NAMES, CORNER_FACELETS, p, text)} twist {co[p]}" for p in twisted),
            facelets=_names(CORNER_FACELETS, twisted), corners=[CORNER_NAMES[p] for p in twisted])
    if _parity(cp) != _parity(ep):
        raise ParityError(
            "permutation parity: corners and edges are permuted with different parity "
            "(two edges or two corners are swapped, e.g. after reassembly)")
    return (cp.astype(np.int64), co.astype(np.int64), ep.astype(np.int64), eo.astype(np.int64)), centres
