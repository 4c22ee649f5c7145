"""The solver's graph: what each step costs, with each regrip charged by the turns around it.

A regrip's cost depends on the turn before it (how long the taking jaws may start closing
before it ends) and on the turn after it (how far its layers reach towards the releasing
jaws): plan.RobotProfile.regrip_cost.  The search and the cost table therefore take a
regrip together with the turn after it, as one step, and remember of the turn before it
only its class: turns whose kinds (plan.turn_kind) give the same regrip costs in every
hand-over share a class.  With the default settings every kind gives the same costs, so
the table keeps one row per pair, as it did before regrips depended on their neighbours.

The first grip of a plan comes with no turn before it (the start, `START`): the search
expands that one node itself (start_value), so the table needs no row for it.

With robot.square_released_arms (docs/solver.md, "Square released arms") two
perpendicular arms must never both stand a quarter round: before a pair turns, the other
(open) pair's arms are square, so a pair released with an arm off square turns back a
quarter in the air (both off arms at once) before the taking pair's first turn.  That
costs a quarter turn, and the GRIP before it waits as for a quarter turn after it (the
jaws must clear the layer's corners as the arm passes 45 degrees).  Whether it is needed
depends on the holding pair's arms mod 180, so a node also carries their quarter
**parity** (bit i: the pair's arm i stands a quarter round): one more table dimension.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..plan import RobotProfile, Turn, turn_kind
from .coords import SOLVED_INDEX

START = None  # "no turn before the regrip": the plan's start
RESTORE_KIND = (90,)  # a released arm turning back in the air: a quarter turn


@dataclass(frozen=True)
class PairTurn:
    turn: Turn
    faces: tuple  # FACE_TURNS indices of its face moves (solver/coords.py)
    inverse_faces: tuple  # those of the turn that undoes it
    cost: int
    kind: tuple
    klass: int  # the class of its kind (a row of the cost table)
    mask: int = 0  # the arms it turns a quarter (bit i: the pair's arm i); 0 unless arms are squared


class CostModel:
    """Per pair: its turns, their classes; per class before, hand-over and kind after: the regrip's cost."""

    def __init__(self, profile: RobotProfile, face_index):
        self.profile = profile
        names = profile.pair_names
        kinds = sorted({turn_kind(t.arms.values()) for name in names for t in profile.turns_of(name)})

        def row(before):  # what a kind before a regrip decides: the costs of every regrip after it
            return tuple(self._regrip(a, b, before, after) for a in names for b in names if a != b for after in kinds)

        rows: dict = {}
        self.class_of = {kind: rows.setdefault(row(kind), len(rows)) for kind in kinds}
        self.n_classes = len(rows)
        self.n_pairs = len(names)
        self.square = profile.square_released
        self.faces = [profile.faces_of(name) for name in names]
        # Quarter parities of the holding pair's arms (1: nothing tracked, every arm counts as square).
        self.n_parities = 2 ** max(len(faces) for faces in self.faces) if self.square else 1
        self.restore_ms = profile.turn_ms(90)
        self.turns = []  # per pair index: [PairTurn], cheapest first (the plan prefers them on ties)
        for pair, name in enumerate(names):
            options = []
            for turn in profile.turns_of(name):
                kind = turn_kind(turn.arms.values())
                undo = Turn({f: -a for f, a in turn.arms.items()})
                mask = sum(1 << i for i, face in enumerate(self.faces[pair])
                           if abs(turn.arms.get(face, 0)) == 90) if self.square else 0
                options.append(PairTurn(turn, face_index(turn), face_index(undo), profile.cost(turn), kind,
                                        self.class_of[kind], mask))
            options.sort(key=lambda o: o.cost)
            self.turns.append(options)
        # regrip[p][c][q][kind]: pair q takes from p after a turn of class c (or START), before a turn of `kind`.
        representative = {c: k for k, c in reversed(self.class_of.items())}
        befores = [representative[c] for c in range(self.n_classes)] + [START]
        self.regrip = [[[{kind: self._regrip(q_name, p_name, before, kind) if q_name != p_name else 0
                          for kind in kinds} for q_name in names] for before in befores] for p_name in names]

    def _regrip(self, taking, releasing, before, after) -> int:
        return self.profile.regrip_kind_cost(taking, releasing, before, after)

    def hand_over(self, p: int, klass: int, q: int, kind: tuple, parity: int) -> int:
        """Pair q takes from p (after a turn of class `klass`, or START) until q's turn of `kind` may
        start: the GRIP, and the released arms' turn back in the air when p's parity says one is off
        square (the GRIP then waits as for a quarter turn: it is the next turn)."""
        if q == p:
            return 0
        if not parity:
            return self.regrip[p][klass][q][kind]
        return self.regrip[p][klass][q][RESTORE_KIND] + self.restore_ms

    def restore_turn(self, pair: int, parity: int) -> Turn:
        """The released pair's arms that stand a quarter round turning back (the sign is the plan's:
        robot/solver/search.py orients it by where each arm stands)."""
        return Turn({face: -90 for i, face in enumerate(self.faces[pair]) if parity >> i & 1}, air=True)

    def row(self, pair: int, klass: int, parity: int = 0) -> int:
        """The cost table's row of (holding pair, class of the last turn, its arms' quarter parity)."""
        return (pair * self.n_classes + klass) * self.n_parities + parity

    @property
    def n_rows(self) -> int:
        return self.n_pairs * self.n_classes * self.n_parities

    def start_class(self) -> int:
        """The index of START in regrip[p]."""
        return self.n_classes


def start_values(model: CostModel, table: np.ndarray, moved, parity: int = 0) -> np.ndarray:
    """The cost to solved from the start, for every (pair, state): the start's one expansion (a
    turn, or a regrip with nothing before it then a turn) onto the table.  `moved(faces)`: the
    canonical index of every state after those face turns.  `parity`: the starting pair's arms'
    quarter parity (0: square).  Solved: 0."""
    value = np.full((model.n_pairs, table.shape[1]), np.iinfo(np.int64).max, dtype=np.int64)
    for q in range(model.n_pairs):
        for option in model.turns[q]:
            states = moved(option.faces)
            for p in range(model.n_pairs):
                after = parity ^ option.mask if p == q else option.mask
                extra = model.hand_over(p, model.start_class(), q, option.kind, parity)
                total = table[model.row(q, option.klass, after)][states].astype(np.int64) + option.cost + extra
                np.minimum(value[p], total, out=value[p])
    value[:, SOLVED_INDEX] = 0
    return value
