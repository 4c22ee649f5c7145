"""Coordinates of cube states and the small transition tables over them.

A state is kept in the robot frame as two coordinates:
  cp8  0..40319  rank of the corner permutation (lexicographic order)
  co8  0..2186   corner twists of positions 0..6 in base 3, position DBL (6)
                 as the most significant digit (position 7 follows from the sum)
Face turns act on each coordinate separately (CP_MOVE, CO_MOVE).

Relabelling the pieces by a whole-cube rotation does not change what the robot
must do (cube.CubieCube.canonical), so cost tables are indexed by the
canonical representative: the relabelling that puts the DBL piece at DBL,
untwisted.  Its index is
  state = cp7 * 729 + co6      (3,674,160 states; solved = 0)
where cp7 ranks the permutation of the other seven pieces and co6 = co8 (the
DBL digit being 0).  `canonical_index` computes it with five table lookups.

The coordinates are numbered by the puzzle engine's rankers (robot/puzzles/coords.py) and the
face-turn tables are its move tables over its 2x2x2 (robot/puzzles/data/2x2x2.yaml, checked against
robot.cube by tests/test_puzzles.py); the relabellings come from robot.cube.  Nothing here restates
cube facts.
"""

from __future__ import annotations

import math

import numpy as np

from .. import cube
from ..puzzles import load_puzzle
from ..puzzles.coords import (OrientationComponent, PermutationComponent, Space, orientation_rank,
                              permutation_rank, rank_orientation, rank_permutation, unrank_orientation,
                              unrank_permutation)
from ..puzzles.tables import MoveTables

N_CP8 = math.factorial(8)  # 40320
N_CO8 = 3**7  # 2187
N_CO6 = 3**6  # 729, twists of positions 0..5 when DBL is untwisted
N_CP7 = math.factorial(7)  # 5040
N_STATES = N_CP7 * N_CO6  # 3,674,160
DBL = cube.DBL
FACE_TURNS = tuple(face + suffix for face in cube.FACES for suffix in ("", "2", "'"))
SOLVED_INDEX = 0
# co8's digits, most significant first: DBL's, then positions 5..0; position 7 follows from the sum.
TWIST_DIGITS = (DBL, 5, 4, 3, 2, 1, 0, 7)


def all_permutations() -> np.ndarray:
    """(40320, 8) int8: permutation number k is row k (lexicographic order)."""
    return unrank_permutation(np.arange(N_CP8), 8).astype(np.int8)


def all_twists() -> np.ndarray:
    """(2187, 8) int8: twist digits of co8 number k; column 7 makes the sum 0 mod 3."""
    digits = np.empty((N_CO8, 8), dtype=np.int8)
    digits[:, TWIST_DIGITS] = unrank_orientation(np.arange(N_CO8), 8, 3, constrained=True)
    return digits


def encode_twists(digits: np.ndarray) -> np.ndarray:
    """Inverse of all_twists (column 7 ignored)."""
    return rank_orientation(np.asarray(digits)[:, TWIST_DIGITS], 3, constrained=True)


def face_turn_tables() -> tuple[np.ndarray, np.ndarray]:
    """(cp_move, co_move): the puzzle engine's move tables of cp8 and co8 over FACE_TURNS."""
    puzzle = load_puzzle("2x2x2")
    corners = puzzle.orbit("corners")
    space = Space(puzzle, [
        PermutationComponent("cp8", corners.perm_slots, range(8), even_only=False),
        OrientationComponent("co8", corners.ori_offset + np.array(TWIST_DIGITS), 3, constrained=True),
    ])
    cp_table, co_table = MoveTables(space, [puzzle.move(name) for name in FACE_TURNS]).tables
    # The engine's tables are (value, move); the search reads one move's row: (move, value).
    return (np.ascontiguousarray(cp_table.T, dtype=np.uint16),
            np.ascontiguousarray(co_table.T, dtype=np.uint16))


class CoordTables:
    """All profile-independent tables; built by `build()`, stored in tables/coords.npz.

    Arrays:
      cp_move[t, cp8], co_move[t, co8]   t indexes FACE_TURNS
      piece_at_dbl[cp8]                  which piece sits at DBL
      relabel_rotation[piece*3 + twist]  rotation index putting that piece at DBL untwisted
      canon_cp[r, cp8]                   cp7 of the relabelled permutation (valid where it fixes DBL)
      relabel_twist[r, cp8]              co8 code of the twists the relabelling adds
      co_add[a, b]                       co8 of digit-wise (a + b) mod 3
      cp7_to_cp8[cp7]                    back from canonical to robot-frame coordinates
    """

    NAMES = ("cp_move", "co_move", "piece_at_dbl", "relabel_rotation", "canon_cp",
             "relabel_twist", "co_add", "cp7_to_cp8")
    # set from `arrays` by name in __init__
    cp_move: np.ndarray
    co_move: np.ndarray
    piece_at_dbl: np.ndarray
    relabel_rotation: np.ndarray
    canon_cp: np.ndarray
    relabel_twist: np.ndarray
    co_add: np.ndarray
    cp7_to_cp8: np.ndarray

    def __init__(self, arrays: dict):
        for name in self.NAMES:
            setattr(self, name, arrays[name])
        self._fast: dict[str, memoryview] | None = None

    @classmethod
    def build(cls) -> "CoordTables":
        perms = all_permutations()
        twists = all_twists()
        cp_move, co_move = face_turn_tables()
        rotations = cube.ROTATIONS
        relabel_rotation = np.array(
            [cube.ROTATION_FIXING_DBL[p][o] for p in range(8) for o in range(3)], dtype=np.uint8
        )
        canon_cp = np.empty((len(rotations), N_CP8), dtype=np.uint16)
        relabel_twist = np.empty((len(rotations), N_CP8), dtype=np.uint16)
        fixing = perms[:, DBL] == DBL
        cp8_to_cp7 = np.full(N_CP8, np.iinfo(np.uint16).max, dtype=np.uint16)
        cp8_to_cp7[fixing] = np.arange(N_CP7)  # lexicographic order is kept
        for r, rotation in enumerate(rotations):
            relabelled = np.array(rotation.cp, dtype=np.int8)[perms]
            canon_cp[r] = cp8_to_cp7[rank_permutation(relabelled)]
            relabel_twist[r] = encode_twists(np.array(rotation.co, dtype=np.int8)[perms])
        a = np.arange(N_CO8)
        co_add = encode_twists(((twists[a][:, None, :] + twists[a][None, :, :]) % 3).reshape(-1, 8)).reshape(N_CO8, N_CO8)
        arrays = {
            "cp_move": cp_move,
            "co_move": co_move,
            "piece_at_dbl": perms[:, DBL].astype(np.uint8),
            "relabel_rotation": relabel_rotation,
            "canon_cp": canon_cp,
            "relabel_twist": relabel_twist,
            "co_add": co_add.astype(np.uint16),
            "cp7_to_cp8": np.flatnonzero(fixing).astype(np.uint16),
        }
        return cls(arrays)

    def arrays(self) -> dict:
        return {name: getattr(self, name) for name in self.NAMES}

    # -- vectorised (numpy) form, used to build the cost tables ----------------

    def canonical_indices(self, cp8: np.ndarray, co8: np.ndarray) -> np.ndarray:
        """Canonical state index of each (cp8, co8) pair."""
        piece = self.piece_at_dbl[cp8].astype(np.int64)
        rotation = self.relabel_rotation[piece * 3 + co8 // N_CO6].astype(np.int64)
        cp7 = self.canon_cp[rotation, cp8].astype(np.int64)
        co6 = self.co_add[self.relabel_twist[rotation, cp8], co8].astype(np.int64)
        return cp7 * N_CO6 + co6

    def robot_frame(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(cp8, co8) of canonical state indices."""
        states = np.asarray(states, dtype=np.int64)
        return self.cp7_to_cp8[states // N_CO6].astype(np.int64), states % N_CO6

    # -- scalar form, used by the search --------------------------------------

    def scalar_indexer(self):
        """A fast function (cp8, co8) -> canonical state index for single states."""
        fast = self.fast()
        piece_at_dbl, relabel_rotation = fast["piece_at_dbl"], fast["relabel_rotation"]
        canon_cp, relabel_twist, co_add = fast["canon_cp"], fast["relabel_twist"], fast["co_add"]

        def index(cp8: int, co8: int) -> int:
            k = relabel_rotation[piece_at_dbl[cp8] * 3 + co8 // N_CO6] * N_CP8 + cp8
            return canon_cp[k] * N_CO6 + co_add[relabel_twist[k] * N_CO8 + co8]

        return index

    def fast(self):
        """Flat memoryviews of the tables: indexing them gives Python ints quickly."""
        if self._fast is None:
            self._fast = {name: np.ascontiguousarray(getattr(self, name)).reshape(-1).data
                          for name in self.NAMES}
        return self._fast


def cubie_coords(state: cube.CubieCube) -> tuple[int, int]:
    """(cp8, co8) of a CubieCube."""
    co = state.co
    return int(permutation_rank(state.cp)), int(orientation_rank([co[p] for p in TWIST_DIGITS], 3, constrained=True))
