"""Coordinates: the parts of a puzzle state as numbers 0..size-1, vectorised over many states.

Rankers (each with its inverse, on (N, k) arrays):
  permutation   Lehmer code = lexicographic rank (optionally even permutations only: half the range)
  combination   which k of n places hold a set of pieces (colex order, or lexicographic: the order
                of itertools.combinations)
  orientation   base-m digits, the first column most significant (optionally the last one fixed
                by the sum)
`permutation_rank`, `combination_rank(_lexicographic)` and `orientation_rank` rank one state in
plain Python: a search's start state, where numpy's cost per call would outweigh the work.  The 2x2x2 and 3x3x3 solvers
(robot/solver, robot/solver3) number their coordinates with these rankers.

Components read one part of the flat state (robot.puzzles.puzzle):
  PermutationComponent  the pieces on a block of places that only mix among themselves
  PiecesComponent       where some pieces are (in order, or as a set): for big orbits
  OrientationComponent  the orientations of the places the moves touch

A Space is a product of components: one index per state (mixed radix).
`default_components` splits a puzzle into components from what its moves do.
"""

from __future__ import annotations

from math import comb, factorial

import numpy as np

FILLER = 255  # a place whose piece a PiecesComponent does not track
LARGEST_PERMUTATION = 9  # blocks of more places are split into PiecesComponents
PIECES_PER_CHUNK = 6


# -- rankers ------------------------------------------------------------------

def rank_permutation(perms: np.ndarray, even_only: bool = False) -> np.ndarray:
    """Lehmer rank of each row (a permutation of 0..k-1); even_only: rank among even ones."""
    perms = np.asarray(perms)
    n_rows, k = perms.shape
    rank = np.zeros(n_rows, dtype=np.int64)
    columns = [perms[:, i] for i in range(k)]
    for i in range(k - 1):
        smaller = np.zeros(n_rows, dtype=np.int64)
        for j in range(i + 1, k):  # column pairs: much faster than a 2-D comparison and sum
            smaller += columns[j] < columns[i]
        rank = rank * (k - i) + smaller
    # The last Lehmer digit (radix 2) is fixed by the parity of the others.
    return rank // 2 if even_only else rank


def permutation_rank(perm) -> int:
    """rank_permutation of one permutation (a sequence of ints), without numpy."""
    rank, k = 0, len(perm)
    for i in range(k - 1):
        here = perm[i]
        rank = rank * (k - i) + sum(1 for later in perm[i + 1:] if later < here)
    return rank


def unrank_permutation(ranks: np.ndarray, k: int, even_only: bool = False) -> np.ndarray:
    ranks = np.asarray(ranks, dtype=np.int64)
    rest = ranks * 2 if even_only else ranks.copy()
    digits = np.zeros((len(ranks), k), dtype=np.int64)
    for i in range(k - 2, -1, -1):
        digits[:, i] = rest % (k - i)
        rest //= k - i
    if even_only and k > 1:
        digits[:, k - 2] = digits.sum(axis=1) % 2
    available = np.tile(np.arange(k), (len(ranks), 1))
    perms = np.zeros((len(ranks), k), dtype=np.int64)
    for i in range(k):
        rows = np.arange(len(ranks))
        perms[:, i] = available[rows, digits[:, i]]
        keep = np.arange(k - i)[None, :] != digits[:, i:i + 1]
        available = available[keep].reshape(len(ranks), k - i - 1)
    return perms


def rank_combination(mask: np.ndarray) -> np.ndarray:
    """Colex rank of each row's set of True places: sum of C(place, i + 1) over the i-th chosen place."""
    mask = np.asarray(mask, dtype=bool)
    n = mask.shape[1]
    rank = np.zeros(len(mask), dtype=np.int64)
    nth = np.zeros(len(mask), dtype=np.int64)  # i + 1 at the i-th chosen place
    for place in range(n):  # column by column: much faster than on the 2-D array
        chosen = mask[:, place]
        nth += chosen
        rank += np.array([comb(place, i) for i in range(n + 1)], dtype=np.int64)[nth] * chosen
    return rank


def unrank_combination(ranks: np.ndarray, n: int, k: int) -> np.ndarray:
    rest = np.asarray(ranks, dtype=np.int64).copy()
    left = np.full(len(rest), k)
    mask = np.zeros((len(rest), n), dtype=bool)
    for place in range(n - 1, -1, -1):
        value = np.array([comb(place, j) for j in range(k + 1)], dtype=np.int64)[left]
        take = (left > 0) & (value <= rest)
        rest -= np.where(take, value, 0)
        left -= take
        mask[:, place] = take
    return mask


def combination_rank(chosen) -> int:
    """rank_combination of one set (a sequence of booleans, one per place), without numpy."""
    rank, nth = 0, 0
    for place, taken in enumerate(chosen):
        if taken:
            nth += 1
            rank += comb(place, nth)
    return rank


def combination_rank_lexicographic(chosen) -> int:
    """rank_combination_lexicographic of one set (a sequence of booleans), without numpy."""
    chosen = list(chosen)
    return comb(len(chosen), sum(map(bool, chosen))) - 1 - combination_rank(chosen[::-1])


def rank_combination_lexicographic(mask: np.ndarray) -> np.ndarray:
    """Rank of each row's set of True places in the lexicographic order of the sorted places.

    Mirroring the places (p -> n - 1 - p) reverses that order into colex order.
    """
    mask = np.asarray(mask, dtype=bool)
    n = mask.shape[1]
    sets = np.array([comb(n, k) for k in range(n + 1)], dtype=np.int64)[mask.sum(axis=1)]
    return sets - 1 - rank_combination(mask[:, ::-1])


def unrank_combination_lexicographic(ranks: np.ndarray, n: int, k: int) -> np.ndarray:
    ranks = np.asarray(ranks, dtype=np.int64)
    return unrank_combination(comb(n, k) - 1 - ranks, n, k)[:, ::-1]


def rank_orientation(oris: np.ndarray, m: int, constrained: bool) -> np.ndarray:
    oris = np.asarray(oris, dtype=np.int64)
    used = oris[:, :-1] if constrained else oris
    rank = np.zeros(len(oris), dtype=np.int64)
    for i in range(used.shape[1]):
        rank = rank * m + used[:, i]
    return rank


def orientation_rank(oris, m: int, constrained: bool) -> int:
    """rank_orientation of one state's orientations (a sequence of ints), without numpy."""
    rank = 0
    for value in (oris[:-1] if constrained else oris):
        rank = rank * m + value
    return rank


def unrank_orientation(ranks: np.ndarray, k: int, m: int, constrained: bool) -> np.ndarray:
    rest = np.asarray(ranks, dtype=np.int64).copy()
    free = k - 1 if constrained else k
    oris = np.zeros((len(rest), k), dtype=np.int64)
    for i in range(free - 1, -1, -1):
        oris[:, i] = rest % m
        rest //= m
    if constrained:
        oris[:, k - 1] = (-oris[:, :k - 1].sum(axis=1)) % m
    return oris


# -- components ---------------------------------------------------------------

class PermutationComponent:
    """The arrangement of the pieces that live on `places` (a block the moves only mix inside)."""

    def __init__(self, name: str, slots, pieces, even_only: bool):
        self.name, self.slots, self.even_only = name, np.asarray(slots), even_only
        self.pieces = np.asarray(pieces)
        self.local = np.full(256, -1, dtype=np.int64)
        self.local[self.pieces] = np.arange(len(self.pieces))
        self.size = factorial(len(self.pieces)) // (2 if even_only else 1)

    def rank(self, states: np.ndarray) -> np.ndarray:
        return rank_permutation(self.local[states[:, self.slots]], self.even_only)

    def write(self, states: np.ndarray, ranks) -> None:
        states[:, self.slots] = self.pieces[unrank_permutation(ranks, len(self.pieces), self.even_only)]


class PiecesComponent:
    """Which of `slots` hold the `tracked` pieces: in order (a partial permutation) or as a set.

    The set is ranked in colex order, or lexicographic order with lexicographic=True.
    """

    def __init__(self, name: str, slots, tracked, ordered: bool = True, lexicographic: bool = False):
        self.name, self.slots, self.ordered = name, np.asarray(slots), ordered
        self.lexicographic = lexicographic
        self.tracked = np.asarray(tracked)
        self.local = np.full(256, -1, dtype=np.int64)
        self.local[self.tracked] = np.arange(len(self.tracked))
        n, k = len(self.slots), len(self.tracked)
        self.size = comb(n, k) * (factorial(k) if ordered else 1)

    def rank(self, states: np.ndarray) -> np.ndarray:
        labels = states[:, self.slots]
        mask = self.local[labels] >= 0
        rank = rank_combination_lexicographic(mask) if self.lexicographic else rank_combination(mask)
        if not self.ordered:
            return rank
        k = len(self.tracked)
        order = self.local[labels[mask].reshape(len(states), k)]  # row-major: places in increasing order
        return rank * factorial(k) + rank_permutation(order)

    def write(self, states: np.ndarray, ranks) -> None:
        ranks = np.asarray(ranks, dtype=np.int64)
        k = len(self.tracked)
        per_set = factorial(k) if self.ordered else 1
        mask = self._unrank_sets(ranks // per_set)
        labels = np.full(mask.shape, FILLER, dtype=np.uint8)
        if self.ordered:
            labels[mask] = self.tracked[unrank_permutation(ranks % per_set, k)].ravel()
        else:
            labels[mask] = self.tracked[0]
        states[:, self.slots] = labels

    def _unrank_sets(self, ranks) -> np.ndarray:
        unrank = unrank_combination_lexicographic if self.lexicographic else unrank_combination
        return unrank(ranks, len(self.slots), len(self.tracked))

    def move_table(self, moves) -> np.ndarray:
        """The move table, computed on the tracked pieces' places alone (much faster than on states)."""
        k, n = len(self.tracked), len(self.slots)
        per_set = factorial(k) if self.ordered else 1
        binomials = np.array([[comb(p, i) for i in range(k + 1)] for p in range(n)], dtype=np.int64)
        ranks = np.arange(self.size, dtype=np.int64)
        mask = self._unrank_sets(ranks // per_set)
        sorted_places = np.nonzero(mask)[1].reshape(self.size, k)
        places = np.empty_like(sorted_places)  # places[:, t] = where tracked piece t is
        order = unrank_permutation(ranks % per_set, k) if self.ordered else np.tile(np.arange(k), (self.size, 1))
        np.put_along_axis(places, order, sorted_places, axis=1)
        where = {slot: i for i, slot in enumerate(self.slots.tolist())}
        table = np.empty((self.size, len(moves)), dtype=np.int32)
        for column, move in enumerate(moves):
            destination = np.empty(n, dtype=np.int64)  # the piece at local place i goes to destination[i]
            for j, slot in enumerate(self.slots.tolist()):
                destination[where[int(move.gather[slot])]] = j
            moved = destination[places]
            rank: np.ndarray | int
            if self.ordered:
                new_order = np.argsort(moved, axis=1, kind="stable")
                new_sorted = np.take_along_axis(moved, new_order, axis=1)
                rank = rank_permutation(new_order)
            else:
                new_sorted, rank = np.sort(moved, axis=1), 0
            if self.lexicographic:  # colex rank of the mirrored places, counted from the other end
                set_rank = comb(n, k) - 1 - binomials[n - 1 - new_sorted[:, ::-1], np.arange(1, k + 1)].sum(axis=1)
            else:
                set_rank = binomials[new_sorted, np.arange(1, k + 1)].sum(axis=1)
            table[:, column] = set_rank * per_set + rank
        return table


class OrientationComponent:
    """The orientations on `slots` (base m; constrained: their sum is 0 mod m, the last is implied)."""

    def __init__(self, name: str, slots, m: int, constrained: bool):
        self.name, self.slots, self.m, self.constrained = name, np.asarray(slots), m, constrained
        self.size = m ** (len(self.slots) - (1 if constrained else 0))

    def rank(self, states: np.ndarray) -> np.ndarray:
        return rank_orientation(states[:, self.slots], self.m, self.constrained)

    def write(self, states: np.ndarray, ranks) -> None:
        states[:, self.slots] = unrank_orientation(ranks, len(self.slots), self.m, self.constrained)


Component = PermutationComponent | PiecesComponent | OrientationComponent


class Space:
    """A product of components: each state (as far as they see it) is one index."""

    def __init__(self, puzzle, components):
        self.puzzle, self.components = puzzle, tuple(components)
        self.sizes = [c.size for c in self.components]
        self.size = int(np.prod(self.sizes, dtype=object))
        self.names = [c.name for c in self.components]

    def __repr__(self):
        return "Space(" + " x ".join(f"{c.name} {c.size:,}" for c in self.components) + f" = {self.size:,})"

    def coords(self, states: np.ndarray) -> list[np.ndarray]:
        states = np.atleast_2d(states)
        return [c.rank(states) for c in self.components]

    def combine(self, coords) -> np.ndarray:
        index = np.zeros(len(coords[0]), dtype=np.int64)
        for size, coord in zip(self.sizes, coords):
            index = index * size + coord
        return index

    def split(self, index) -> list[np.ndarray]:
        rest = np.asarray(index, dtype=np.int64)
        coords = []
        for size in reversed(self.sizes):
            coords.append(rest % size)
            rest = rest // size
        return coords[::-1]

    def index(self, states: np.ndarray) -> np.ndarray:
        return self.combine(self.coords(states))

    def states(self, index) -> np.ndarray:
        """Representative states (slots no component reads stay solved)."""
        index = np.atleast_1d(np.asarray(index, dtype=np.int64))
        states = np.tile(self.puzzle.solved, (len(index), 1))
        for component, coord in zip(self.components, self.split(index)):
            component.write(states, coord)
        return states


def _blocks(n: int, sources) -> list[list[int]]:
    """The places 0..n-1 grouped into blocks that the permutations `sources` only mix inside."""
    parent = list(range(n))

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for src in sources:
        for j, i in enumerate(src):
            parent[find(int(i))] = find(j)
    groups: dict[int, list[int]] = {}
    for place in range(n):
        groups.setdefault(find(place), []).append(place)
    return list(groups.values())


def _is_even(perm) -> bool:
    seen, swaps = set(), 0
    for start in range(len(perm)):
        length, j = 0, start
        while j not in seen:
            seen.add(j)
            j = perm[j]
            length += 1
        swaps += max(length - 1, 0)
    return swaps % 2 == 0


def default_components(puzzle, moves, orbits=None) -> list[Component]:
    """Components covering every part of the state the moves change (for the orbits named, or all)."""
    components: list[Component] = []
    for orbit in puzzle.orbits:
        if orbits is not None and orbit.name not in orbits:
            continue
        base = orbit.perm_offset
        sources = [m.gather[orbit.perm_slots] - base for m in moves]
        for block in _blocks(orbit.size, sources):
            if len(block) < 2:
                continue
            position = {place: i for i, place in enumerate(block)}
            even = all(_is_even([position[int(src[p])] for p in block]) for src in sources)
            slots = [base + p for p in block]
            label = f"{orbit.name} permutation" + (f" {block[0]}.." if len(block) < orbit.size else "")
            if len(block) <= LARGEST_PERMUTATION:
                components.append(PermutationComponent(label, slots, block, even))
            else:
                for start in range(0, len(block), PIECES_PER_CHUNK):
                    chunk = block[start:start + PIECES_PER_CHUNK]
                    components.append(PiecesComponent(f"{orbit.name} {chunk[0]}-{chunk[-1]} places",
                                                      slots, chunk, ordered=True))
        if orbit.ori_offset is None:
            continue
        touched = [p for p in range(orbit.size) if any(
            m.gather[base + p] != base + p or _twist(m, orbit.ori_offset + p) for m in moves)]
        if touched:
            constrained = all(sum(_twist(m, orbit.ori_offset + p) for p in range(orbit.size)) % orbit.orientations
                              == 0 for m in moves)
            components.append(OrientationComponent(f"{orbit.name} orientation",
                                                   [orbit.ori_offset + p for p in touched],
                                                   orbit.orientations, constrained))
    return components


def _twist(move, slot: int) -> int:
    where = np.flatnonzero(move.ori_slots == slot)
    return int(move.ori_add[where[0]]) if len(where) else 0
