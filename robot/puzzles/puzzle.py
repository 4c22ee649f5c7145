"""A loaded puzzle: flat numpy state arrays, moves, rotations and facelet strings.

A state is one uint8 array: for each orbit its permutation block (which piece
sits at each place) and, when the orbit has more than one orientation, its
orientation block.  Arrays of shape (N, length) hold N states; every operation
here works on both.  A move is one gather (`state[..., src]`) plus an addition
modulo the orientation count on the orientation slots.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from .definition import load_spec
from .geometry import DerivedMove, derive_moves, orbit_geometry

DATA_DIR = Path(__file__).resolve().parent / "data"
METRICS = ("htm", "qtm")


class PuzzleMoveError(ValueError):
    """A move sequence naming a move the puzzle does not have."""


class PuzzleStateError(ValueError):
    """A facelet string that is not a state of the puzzle."""


@dataclass(frozen=True)
class Move:
    """A move as an operation on flat states."""

    name: str
    base: str
    power: int
    order: int
    axis: np.ndarray | None  # None: a move given explicitly
    gather: np.ndarray  # new[..., j] = old[..., gather[j]]
    ori_slots: np.ndarray  # slots that take an orientation change
    ori_add: np.ndarray
    ori_mod: np.ndarray

    @property
    def is_quarter(self) -> bool:
        """One step of the turn either way (a quarter turn, or any turn of a 3-fold axis)."""
        return self.power in (1, self.order - 1)


@dataclass(frozen=True)
class OrbitLayout:
    name: str
    pieces: tuple[str, ...]
    orientations: int
    perm_offset: int
    ori_offset: int | None  # None when the orbit has one orientation

    @property
    def size(self) -> int:
        return len(self.pieces)

    @property
    def perm_slots(self) -> np.ndarray:
        return np.arange(self.perm_offset, self.perm_offset + self.size)

    @property
    def ori_slots(self) -> np.ndarray | None:
        if self.ori_offset is None:
            return None
        return np.arange(self.ori_offset, self.ori_offset + self.size)


class Puzzle:
    """A twisty puzzle defined by a YAML file (see docs/puzzles.md)."""

    def __init__(self, path):
        self.spec = load_spec(path)
        self.name = self.spec.name
        self.geometry = orbit_geometry(self.spec)
        layouts, offset = [], 0
        for orbit in self.geometry:
            n = len(orbit.pieces)
            ori_offset = offset + n if orbit.orientations > 1 else None
            layouts.append(OrbitLayout(orbit.name, orbit.pieces, orbit.orientations, offset, ori_offset))
            offset += n * (2 if orbit.orientations > 1 else 1)
        self.orbits = tuple(layouts)
        self.length = offset
        self.solved = np.zeros(offset, dtype=np.uint8)
        for layout in self.orbits:
            self.solved[layout.perm_slots] = np.arange(layout.size)
        derived_moves, derived_rotations = derive_moves(self.spec, self.geometry)
        self.moves = {m.name: self._flat(m) for m in derived_moves}
        self.rotations = {m.name: self._flat(m) for m in derived_rotations}
        self._facelet_tables()

    def __repr__(self):
        return f"Puzzle({self.name!r}, {len(self.moves)} moves, {self.length} state slots)"

    def orbit(self, name: str) -> OrbitLayout:
        return next(o for o in self.orbits if o.name == name)

    # -- moves ---------------------------------------------------------------

    def _flat(self, derived: DerivedMove) -> Move:
        gather = np.arange(self.length)
        ori_slots: list[int] = []
        ori_add: list[int] = []
        ori_mod: list[int] = []
        for orbit, move in zip(self.orbits, derived.orbits):
            gather[orbit.perm_slots] = orbit.perm_offset + move.src
            orbit_ori_slots = orbit.ori_slots
            if orbit.ori_offset is not None and orbit_ori_slots is not None:
                gather[orbit_ori_slots] = orbit.ori_offset + move.src
                ori_slots.extend(orbit_ori_slots)
                ori_add.extend(move.twist)
                ori_mod.extend([orbit.orientations] * orbit.size)
        return Move(derived.name, derived.base, derived.power, derived.order, derived.axis, gather,
                    np.array(ori_slots, dtype=np.intp), np.array(ori_add, dtype=np.uint8),
                    np.array(ori_mod, dtype=np.uint8))

    def move(self, name: str) -> Move:
        found = self.moves.get(name) or self.rotations.get(name)
        if found is None:
            known = " ".join(list(self.moves) + list(self.rotations))
            raise PuzzleMoveError(f"{self.name} has no move {name!r} (moves: {known})")
        return found

    @staticmethod
    def apply_move(states: np.ndarray, move: Move) -> np.ndarray:
        """The state(s) after one move (states: (length,) or (N, length))."""
        result = states[..., move.gather]
        if len(move.ori_slots):
            result[..., move.ori_slots] = (result[..., move.ori_slots] + move.ori_add) % move.ori_mod
        return result

    def parse_moves(self, text) -> list[str]:
        """'R U2 F'' -> ['R', 'U2', "F'"]; an unknown move raises PuzzleMoveError naming it."""
        tokens = text.replace("\u2019", "'").split() if isinstance(text, str) else list(text)
        for position, token in enumerate(tokens, start=1):
            if token not in self.moves and token not in self.rotations:
                raise PuzzleMoveError(
                    f"move {position} {token!r} is not a move of {self.name} "
                    f"(moves: {' '.join(list(self.moves) + list(self.rotations))})")
        return tokens

    def apply(self, state: np.ndarray, moves) -> np.ndarray:
        """The state after a move sequence (a string or a list of names)."""
        for name in self.parse_moves(moves):
            state = self.apply_move(state, self.move(name))
        return state

    def search_moves(self, metric: str = "htm") -> list[Move]:
        """The moves a search uses: every power (htm) or quarter turns only (qtm), and none that moves
        the fixed piece (a puzzle without fixed centres is solved up to whole-puzzle rotation)."""
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r} (known: {', '.join(METRICS)})")
        moves = [m for m in self.moves.values() if metric == "htm" or m.is_quarter]
        if self.spec.fixed_piece is not None:
            slot = self._fixed_slots()
            moves = [m for m in moves if all(m.gather[s] == s for s in slot)
                     and not np.any(m.ori_add[np.isin(m.ori_slots, slot)])]
        return moves

    def inverse(self, move: Move) -> Move:
        return next(m for m in list(self.moves.values()) + list(self.rotations.values())
                    if m.base == move.base and (m.power + move.power) % m.order == 0)

    # -- whole-puzzle rotations and the fixed piece --------------------------

    def _fixed_slots(self) -> list[int]:
        piece = self.spec.fixed_piece
        orbit = next(o for o in self.orbits if piece in o.pieces)
        place = orbit.pieces.index(piece)
        slots = [orbit.perm_offset + place]
        if orbit.ori_offset is not None:
            slots.append(orbit.ori_offset + place)
        return slots

    @cached_property
    def rotation_states(self) -> np.ndarray:
        """Every whole-puzzle rotation, as the state it makes of the solved puzzle."""
        found = {self.solved.tobytes(): self.solved}
        frontier = [self.solved]
        while frontier:
            next_frontier = []
            for state in frontier:
                for rotation in self.rotations.values():
                    turned = self.apply_move(state, rotation)
                    if turned.tobytes() not in found:
                        found[turned.tobytes()] = turned
                        next_frontier.append(turned)
            frontier = next_frontier
        return np.array(list(found.values()))

    def relabel(self, rotation: np.ndarray, states: np.ndarray) -> np.ndarray:
        """rotation * state: the same physical puzzle with its pieces renamed by a rotation."""
        result = states.copy()
        for orbit in self.orbits:
            pieces = states[..., orbit.perm_slots].astype(np.intp)
            result[..., orbit.perm_slots] = rotation[orbit.perm_offset + pieces]
            if orbit.ori_offset is not None:
                result[..., orbit.ori_slots] = (
                    rotation[orbit.ori_offset + pieces] + states[..., orbit.ori_slots]) % orbit.orientations
        return result

    def canonical(self, states: np.ndarray) -> np.ndarray:
        """States relabelled so the fixed piece is at home untwisted (identity without a fixed piece)."""
        if self.spec.fixed_piece is None:
            return states.copy()
        slots = self._fixed_slots()
        batch = np.atleast_2d(states)
        result = np.empty_like(batch)
        for rotation in self.rotation_states:
            relabelled = self.relabel(rotation, batch)
            home = np.all(relabelled[:, slots] == self.solved[slots], axis=1)
            result[home] = relabelled[home]
        return result.reshape(states.shape)

    def random_states(self, count: int, rng, moves: int = 60) -> np.ndarray:
        """`count` states after `moves` random search moves each (numpy Generator rng)."""
        search = self.search_moves("htm")
        states = np.tile(self.solved, (count, 1))
        for _ in range(moves):
            choice = rng.integers(0, len(search), count)
            for index, move in enumerate(search):
                rows = choice == index
                states[rows] = self.apply_move(states[rows], move)
        return states

    # -- facelet strings -----------------------------------------------------

    def _facelet_tables(self):
        """For each facelet: its perm and ori slot, the slot number k and the orbit's orientation count."""
        faces = list(self.spec.faces)
        self.face_names = "".join(faces)
        perm_slot, ori_slot, slot_k, modulus, colour_row = [], [], [], [], []
        colour_table: list[list[int]] = []
        row_offset: dict[str, int] = {}
        for orbit, geometry in zip(self.orbits, self.geometry):
            row_offset[orbit.name] = len(colour_table)
            for slots in geometry.slots:
                colour_table.append([faces.index(f) for f in slots] + [0] * (3 - len(slots)))
        for face, piece in self.spec.layout:
            orbit = next(o for o in self.orbits if piece in o.pieces)
            geometry = next(g for g in self.geometry if g.name == orbit.name)
            place = orbit.pieces.index(piece)
            perm_slot.append(orbit.perm_offset + place)
            ori_slot.append(orbit.ori_offset + place if orbit.ori_offset is not None else -1)
            slot_k.append(geometry.slots[place].index(face))
            modulus.append(orbit.orientations)
            colour_row.append(row_offset[orbit.name])
        self._facelet_perm = np.array(perm_slot)
        self._facelet_ori = np.array(ori_slot)
        self._facelet_k = np.array(slot_k)
        self._facelet_mod = np.array(modulus)
        self._facelet_row = np.array(colour_row)
        self._colours = np.array(colour_table)
        self.facelet_count = len(perm_slot)
        self.solved_facelets = self.to_facelets(self.solved)
        self._decoders = {orbit.name: self._orbit_decoder(orbit, geometry)
                          for orbit, geometry in zip(self.orbits, self.geometry)}

    def _orbit_decoder(self, orbit: OrbitLayout, geometry) -> tuple[np.ndarray, np.ndarray]:
        """(the facelets of each place in slot order, a lookup from the code of the faces a place
        shows to (piece, orientation): -1 where no piece looks like that)."""
        position = {(p, k): i for i, (p, k) in enumerate(zip(self._facelet_perm, self._facelet_k))}
        facelets = np.array([[position[(orbit.perm_offset + place, k)] for k in range(len(slots))]
                             for place, slots in enumerate(geometry.slots)])
        faces = len(self.face_names)
        lookup = np.full((faces ** facelets.shape[1], 2), -1, dtype=np.int16)
        for piece, slots in enumerate(geometry.slots):
            for o in range(orbit.orientations):
                # place slot k shows the piece's slot (k - o) % m
                code = 0
                for k in range(len(slots)):
                    code = code * faces + self.face_names.index(slots[(k - o) % orbit.orientations])
                lookup[code] = (piece, o)
        return facelets, lookup

    def decode_orbit(self, codes: np.ndarray, orbit_name: str):
        """(pieces, orientations, ok) of each place of an orbit, from face indices (N, facelet_count)
        into face_names: which piece each place shows and how it is turned; ok is False at a place
        that no piece looks like (pieces and orientations are -1 there)."""
        facelets, lookup = self._decoders[orbit_name]
        shown = np.asarray(codes)[:, facelets].astype(np.int64)
        code = shown[..., 0]
        for k in range(1, facelets.shape[1]):
            code = code * len(self.face_names) + shown[..., k]
        found = lookup[code]
        return found[..., 0], found[..., 1], found[..., 0] >= 0

    def facelet_codes(self, states: np.ndarray) -> np.ndarray:
        """Face index (into face_names) of each facelet, for one state or a batch."""
        pieces = states[..., self._facelet_perm].astype(np.intp)
        has_ori = self._facelet_ori >= 0
        ori = np.where(has_ori, states[..., np.where(has_ori, self._facelet_ori, 0)], 0)
        slot = (self._facelet_k - ori) % self._facelet_mod
        return self._colours[self._facelet_row + pieces, slot]

    def to_facelets(self, state: np.ndarray) -> str:
        return "".join(self.face_names[c] for c in self.facelet_codes(state))

    def from_facelets(self, text: str) -> np.ndarray:
        """The state of a facelet string written with the face letters (each piece must be a real one)."""
        if len(text) != self.facelet_count:
            raise PuzzleStateError(f"{self.name}: expected {self.facelet_count} facelets, got {len(text)}")
        bad = sorted({c for c in text if c not in self.face_names})
        if bad:
            raise PuzzleStateError(f"{self.name}: {', '.join(map(repr, bad))} is not a face letter "
                                   f"({self.face_names})")
        state = self.solved.copy()
        codes = np.array([[self.face_names.index(c) for c in text]])
        for orbit in self.orbits:
            pieces, orientations, ok = (a[0] for a in self.decode_orbit(codes, orbit.name))
            if not ok.all():
                place = int(np.flatnonzero(~ok)[0])
                indices = self._decoders[orbit.name][0][place].tolist()
                raise PuzzleStateError(
                    f"{self.name}: no {orbit.name} piece looks like {''.join(text[i] for i in indices)} "
                    f"(place {orbit.pieces[place]}, facelets {', '.join(map(str, indices))})")
            state[orbit.perm_slots] = pieces
            if orbit.ori_offset is not None:
                state[orbit.ori_slots] = orientations
            placed = state[orbit.perm_slots]
            if len(set(placed.tolist())) != orbit.size:
                twice = [orbit.pieces[p] for p in set(placed.tolist()) if list(placed).count(p) > 1]
                raise PuzzleStateError(f"{self.name}: {orbit.name} piece(s) {', '.join(twice)} appear twice")
        return state


def shipped_puzzles() -> dict[str, Path]:
    """name -> YAML file of every puzzle shipped in robot/puzzles/data/."""
    return {path.stem: path for path in sorted(DATA_DIR.glob("*.yaml"))}


_LOADED: dict[str, Puzzle] = {}


def load_puzzle(name_or_path) -> Puzzle:
    """A shipped puzzle by name ('2x2x2', '3x3x3', 'pyraminx', 'skewb') or any puzzle file by path."""
    shipped = shipped_puzzles()
    key = str(name_or_path)
    if key in shipped:
        if key not in _LOADED:
            _LOADED[key] = Puzzle(shipped[key])
        return _LOADED[key]
    path = Path(name_or_path)
    if path.suffix not in (".yaml", ".yml") and not path.exists():
        raise ValueError(f"unknown puzzle {key!r} (shipped: {', '.join(shipped)}; or give a .yaml file)")
    return Puzzle(path)
