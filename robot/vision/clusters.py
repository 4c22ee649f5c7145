"""Clustering of sticker features into 6 colours of 4 stickers, kept legal.

Colour centres and the cube are refined alternately (`refine`): the best legal
cube for the centres (robot.vision.legal), then the centres of that cube's
colours, until they agree.  Also the one-to-one matching (Hungarian method)
used to pair colours between cubes, scans and calibrations.
"""

from __future__ import annotations

import numpy as np

from .legal import COLOURS, PER_COLOUR, best_legal_labels

def min_cost_assignment(cost) -> np.ndarray:
    """Hungarian method (shortest augmenting paths) for a square cost matrix.

    Returns col_of_row: the column given to each row, minimising the total.
    """
    cost = np.asarray(cost, dtype=float)
    n = cost.shape[0]
    u = np.zeros(n + 1)
    v = np.zeros(n + 1)
    row_of_col = np.zeros(n + 1, dtype=int)  # 1-based rows; column 0 is the virtual start
    way = np.zeros(n + 1, dtype=int)
    for row in range(1, n + 1):
        row_of_col[0] = row
        col = 0
        min_to = np.full(n + 1, np.inf)
        used = np.zeros(n + 1, dtype=bool)
        while True:
            used[col] = True
            r = row_of_col[col]
            reduced = cost[r - 1] - u[r] - v[1:]
            free = ~used[1:]
            better = free & (reduced < min_to[1:])
            min_to[1:][better] = reduced[better]
            way[1:][better] = col
            candidates = np.where(free, min_to[1:], np.inf)
            nxt = int(np.argmin(candidates)) + 1
            delta = candidates[nxt - 1]
            u[row_of_col[used]] += delta
            v[used] -= delta
            min_to[1:][free] -= delta
            col = nxt
            if row_of_col[col] == 0:
                break
        while col:
            prev = way[col]
            row_of_col[col] = row_of_col[prev]
            col = prev
    col_of_row = np.zeros(n, dtype=int)
    for col in range(1, n + 1):
        col_of_row[row_of_col[col] - 1] = col - 1
    return col_of_row


def distances(features: np.ndarray, centres: np.ndarray) -> np.ndarray:
    return np.linalg.norm(features[:, None, :] - centres[None, :, :], axis=-1)


def class_centres(features: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(6, 3) mean feature of each class (every class has exactly 4 stickers)."""
    return np.eye(COLOURS)[labels].T @ features / PER_COLOUR


def balanced_clusters(features: np.ndarray, centres: np.ndarray, rounds: int = 4) -> np.ndarray:
    """6 clusters of exactly 4 stickers (k-means with the count constraint): labels (24,)."""
    labels = None
    for _ in range(rounds):
        slot_cost = np.repeat(distances(features, centres), PER_COLOUR, axis=1)  # (24, 24 slots)
        new = min_cost_assignment(slot_cost) // PER_COLOUR
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        centres = class_centres(features, labels)
    return labels


def farthest_point_centres(features: np.ndarray, first: int) -> np.ndarray:
    chosen = [first]
    nearest = np.linalg.norm(features - features[first], axis=1)
    for _ in range(COLOURS - 1):
        chosen.append(int(np.argmax(nearest)))
        nearest = np.minimum(nearest, np.linalg.norm(features - features[chosen[-1]], axis=1))
    return features[chosen]


def partition_key(labels) -> tuple:
    """Labels renamed in order of first appearance: equal for equal partitions."""
    names = {}
    return tuple(names.setdefault(c, len(names)) for c in np.asarray(labels).tolist())


def fit_cost(features: np.ndarray, labels: np.ndarray) -> float:
    """Summed distance of each sticker to its class centre, the centres fitted to the labels."""
    return float(np.linalg.norm(features - class_centres(features, labels)[labels], axis=1).sum())


def fit_costs(features: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """fit_cost of each row of a (K, 24) batch of labellings."""
    one_hot = np.eye(COLOURS)[labels]  # (K, 24, 6)
    fitted = one_hot.transpose(0, 2, 1) @ features / PER_COLOUR  # (K, 6, 3)
    return np.linalg.norm(features - one_hot @ fitted, axis=2).sum(axis=1)


def refine(features: np.ndarray, centres: np.ndarray, memo: dict, rounds: int = 8) -> np.ndarray:
    """Alternate best legal cube for the centres and centres for the cube until they agree.

    memo: partition key -> where refining from it ended (shared between
    starts, so paths that meet are not walked twice).
    """
    labels, path = None, []
    for _ in range(rounds):
        _, new, _, _ = best_legal_labels(distances(features, centres), labels)
        key = partition_key(new)
        if key in memo:
            labels = memo[key]
            break
        path.append(key)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        centres = class_centres(features, labels)
    for key in path:
        memo[key] = labels
    return labels


def match_classes(features, labels, other) -> np.ndarray:
    """`other`'s classes renamed to the classes of `labels` with the nearest centres."""
    mine, theirs = class_centres(features, labels), class_centres(features, other)
    mapping = min_cost_assignment(distances(theirs, mine))
    return mapping[other]

