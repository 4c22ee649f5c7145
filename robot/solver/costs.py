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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..plan import RobotProfile, Turn, turn_kind
from .coords import SOLVED_INDEX

START = None  # "no turn before the regrip": the plan's start


@dataclass(frozen=True)
class PairTurn:
    turn: Turn
    faces: tuple  # FACE_TURNS indices of its face moves (solver/coords.py)
    inverse_faces: tuple  # those of the turn that undoes it
    cost: int
    kind: tuple
    klass: int  # the class of its kind (a row of the cost table)


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
        self.turns = []  # per pair index: [PairTurn], cheapest first (the plan prefers them on ties)
        for name in names:
            options = []
            for turn in profile.turns_of(name):
                kind = turn_kind(turn.arms.values())
                undo = Turn({f: -a for f, a in turn.arms.items()})
                options.append(PairTurn(turn, face_index(turn), face_index(undo), profile.cost(turn), kind,
                                        self.class_of[kind]))
            options.sort(key=lambda o: o.cost)
            self.turns.append(options)
        # regrip[p][c][q][kind]: pair q takes from p after a turn of class c (or START), before a turn of `kind`.
        representative = {c: k for k, c in reversed(self.class_of.items())}
        befores = [representative[c] for c in range(self.n_classes)] + [START]
        self.regrip = [[[{kind: self._regrip(q_name, p_name, before, kind) if q_name != p_name else 0
                          for kind in kinds} for q_name in names] for before in befores] for p_name in names]

    def _regrip(self, taking, releasing, before, after) -> int:
        return self.profile.regrip_kind_cost(taking, releasing, before, after)

    def row(self, pair: int, klass: int) -> int:
        """The cost table's row of (holding pair, class of the last turn)."""
        return pair * self.n_classes + klass

    @property
    def n_rows(self) -> int:
        return self.n_pairs * self.n_classes

    def start_class(self) -> int:
        """The index of START in regrip[p]."""
        return self.n_classes


def start_values(model: CostModel, table: np.ndarray, moved) -> np.ndarray:
    """The cost to solved from the start, for every (pair, state): the start's one expansion (a
    turn, or a regrip with nothing before it then a turn) onto the table.  `moved(faces)`: the
    canonical index of every state after those face turns.  Solved: 0."""
    value = np.full((model.n_pairs, table.shape[1]), np.iinfo(np.int64).max, dtype=np.int64)
    for q in range(model.n_pairs):
        for option in model.turns[q]:
            after = table[model.row(q, option.klass)][moved(option.faces)].astype(np.int64) + option.cost
            for p in range(model.n_pairs):
                extra = 0 if p == q else model.regrip[p][model.start_class()][q][option.kind]
                np.minimum(value[p], after + extra, out=value[p])
    value[:, SOLVED_INDEX] = 0
    return value
