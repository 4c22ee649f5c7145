"""Clustering of sticker features into 6 colours of 4 stickers, kept legal.

Colour centres and the cube are refined alternately (`refine`): the best legal
cube for the centres (robot.vision.legal), then the centres of that cube's
colours, until they agree.  Also the one-to-one matching (Hungarian method)
used to pair colours between cubes, scans and calibrations.
"""

from __future__ import annotations

import numpy as np

from .legal import COLOURS, PER_COLOUR, best_legal_labels

FIRST_STEP_SCHEMES = 1

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


def class_centres(features: np.ndarray, labels: np.ndarray, weights=None) -> np.ndarray:
    """(6, 3) mean feature of each class (every class has exactly 4 stickers).

    weights: optional (24,) 0/1, 0 for unread stickers (left out of the means;
    a class with no read sticker keeps the mean of all four).
    """
    one_hot = np.eye(COLOURS)[labels]
    if weights is None:
        return one_hot.T @ features / PER_COLOUR
    counts = weights @ one_hot
    read = (one_hot * weights[:, None]).T @ features / np.maximum(counts, 1e-9)[:, None]
    return np.where(counts[:, None] > 0, read, one_hot.T @ features / PER_COLOUR)


def balanced_clusters(features: np.ndarray, centres: np.ndarray, rounds: int = 4) -> np.ndarray:
    """6 clusters of exactly 4 stickers (k-means with the count constraint): labels (24,)."""
    labels: np.ndarray | None = None
    for _ in range(rounds):
        slot_cost = np.repeat(distances(features, centres), PER_COLOUR, axis=1)  # (24, 24 slots)
        new = min_cost_assignment(slot_cost) // PER_COLOUR
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        centres = class_centres(features, labels)
    assert labels is not None, "at least one round"
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
    names: dict[int, int] = {}
    return tuple(names.setdefault(c, len(names)) for c in np.asarray(labels).tolist())


def same_partition(batch: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(K,) whether each row of a (K, 24) batch of legal labellings is `labels` with colours renamed."""
    first = np.unique(labels, return_index=True)[1]  # a sticker of each class
    renaming = batch[:, first]  # (K, 6) what each class of `labels` is called in the row
    # (4 stickers of every colour in both, so a consistent renaming is one to one)
    return (np.take_along_axis(renaming, np.broadcast_to(labels, batch.shape), axis=1) == batch).all(axis=1)


def fit_cost(features: np.ndarray, labels: np.ndarray, weights=None) -> float:
    """Summed distance of each (read) sticker to its class centre, the centres fitted to the labels."""
    cost = np.linalg.norm(features - class_centres(features, labels, weights)[labels], axis=1)
    return float(cost.sum() if weights is None else cost @ weights)


def fit_costs(features: np.ndarray, labels: np.ndarray, weights=None) -> np.ndarray:
    """fit_cost of each row of a (K, 24) batch of labellings."""
    one_hot = np.eye(COLOURS)[labels]  # (K, 24, 6)
    if weights is None:
        fitted = one_hot.transpose(0, 2, 1) @ features / PER_COLOUR  # (K, 6, 3)
        return np.linalg.norm(features - one_hot @ fitted, axis=2).sum(axis=1)
    fitted = np.stack([class_centres(features, row, weights) for row in labels]) if len(labels) else \
        np.empty((0, COLOURS, features.shape[1]))
    return np.linalg.norm(features - one_hot @ fitted, axis=2) @ weights


def sticker_costs(features: np.ndarray, centres: np.ndarray, weights=None) -> np.ndarray:
    """(24, 6) cost of giving each sticker each class: its distance, 0 for unread stickers."""
    cost = distances(features, centres)
    return cost if weights is None else cost * weights[:, None]


def refine(features: np.ndarray, centres: np.ndarray, memo: dict, rounds: int = 8, weights=None) -> np.ndarray:
    """Alternate best legal cube for the centres and centres for the cube until they agree.

    memo: partition key -> where refining from it ended (shared between
    starts, so paths that meet are not walked twice).  weights: see class_centres.
    """
    labels: np.ndarray | None = None
    path: list[tuple] = []
    for _ in range(rounds):
        # The first step from rough start centres searches the likeliest scheme only (speed);
        # the later ones and the decoder's final search are exact.
        _, new, _, _ = best_legal_labels(sticker_costs(features, centres, weights), labels,
                                         schemes=FIRST_STEP_SCHEMES if labels is None else None)
        key = partition_key(new)
        if key in memo:
            labels = memo[key]
            break
        path.append(key)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        centres = class_centres(features, labels, weights)
    for key in path:
        memo[key] = labels
    assert labels is not None, "at least one round"
    return labels


def match_classes(features, labels, other, weights=None) -> np.ndarray:
    """`other`'s classes renamed to the classes of `labels` with the nearest centres."""
    mine, theirs = class_centres(features, labels, weights), class_centres(features, other, weights)
    mapping = min_cost_assignment(distances(theirs, mine))
    return mapping[other]

