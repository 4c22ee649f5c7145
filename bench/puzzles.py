"""Puzzle engine benchmark (robot/puzzles/): prints a table.

    python bench/puzzles.py [--skip-3x3x3] [--seed 1]

Distance tables: build time (move tables + BFS / bucketed Dijkstra), peak
memory the build allocated (tracemalloc; numpy reports its arrays to it), the
depth counts compared with the published ones.  Then the checks against
robot/cube.py and the searches: IDA* (pattern-database heuristics) and the
bidirectional BFS oracle.  Targets: the counts match; the 3x3x3
corner BFS (88,179,840 states, uint8) in about a minute or less.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robot import cube  # noqa: E402
from robot.puzzles import load_puzzle  # noqa: E402
from robot.puzzles.coords import Space, default_components  # noqa: E402
from robot.puzzles.search import IDAStar, PatternDatabase, bidirectional_search  # noqa: E402
from robot.puzzles.tables import MoveTables, depth_counts, distance_table  # noqa: E402

PUBLISHED = {  # depth counts (None: only the total and God's number are published / certain)
    ("2x2x2", "htm"): [1, 9, 54, 321, 1847, 9992, 50136, 227536, 870072, 1887748, 623800, 2644],
    ("2x2x2", "qtm"): [1, 6, 27, 120, 534, 2256, 8969, 33058, 114149, 360508, 930588, 1350852, 782536,
                       90280, 276],
}
PUBLISHED_TOTAL_AND_DEPTH = {("pyraminx", "htm"): (933_120, 11), ("skewb", "htm"): (3_149_280, 11),
                             ("3x3x3 corners", "htm"): (88_179_840, 11)}
SCRAMBLE_LENGTH = 9
CORNERS_LAST = [45_391_616, 15_139_616, 64_736]

rows: list[tuple[str, str, str]] = []


def row(measure: str, value: str, note: str = "") -> None:
    rows.append((measure, value, note))
    print(f"  {measure:<50} {value:<34} {note}", flush=True)


def build(name: str, metric: str, orbits=None, half_cost: int | None = None):
    """Move tables + distance table; returns (tables, distance) and records a row."""
    puzzle = load_puzzle(name)
    moves = puzzle.search_moves(metric)
    tracemalloc.start()
    started = time.perf_counter()
    tables = MoveTables(Space(puzzle, default_components(puzzle, moves, orbits)), moves)
    built = time.perf_counter()
    costs = None if half_cost is None else [1 if m.is_quarter else half_cost for m in moves]
    distance = distance_table(tables, costs=costs)
    done = time.perf_counter()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    counts = depth_counts(distance)
    label = f"{name}{' ' + '+'.join(orbits) if orbits else ''} {metric}" + (" (Dijkstra, half=2)" if half_cost else "")
    key = (f"{name} {'+'.join(orbits)}" if orbits else name, "qtm" if half_cost else metric)
    if key in PUBLISHED:
        verdict = "= published" if counts == PUBLISHED[key] else "DIFFERS from published"
    elif key in PUBLISHED_TOTAL_AND_DEPTH:
        total, deepest = PUBLISHED_TOTAL_AND_DEPTH[key]
        ok = sum(counts) == total and len(counts) - 1 == deepest
        if key[0] == "3x3x3 corners":
            ok = ok and counts[-3:] == CORNERS_LAST
        verdict = "= published total, God's number" + (", last 3 depths" if key[0] == "3x3x3 corners" else "")
        verdict = verdict if ok else "DIFFERS from published"
    else:
        verdict = ""
    row(f"{label}: states, God's number", f"{sum(counts):,}, {len(counts) - 1}", verdict)
    row(f"{label}: build (move tables + search)", f"{done - started:.2f} s ({built - started:.2f} + "
        f"{done - built:.2f})", f"space {tables.space.size:,}")
    row(f"{label}: peak memory allocated", f"{peak / 2**20:.0f} MB", f"table {distance.nbytes / 2**20:.1f} MB uint8")
    row(f"{label}: depth counts", " ".join(map(str, counts)))
    return tables, distance


def check_against_cube_py(seed: int) -> None:
    puzzle = load_puzzle("2x2x2")
    rng = np.random.default_rng(seed)
    names = list(cube.MOVES)
    started = time.perf_counter()
    cubies = [cube.random_state(rng) for _ in range(10_000)]
    chosen = rng.integers(0, len(names), len(cubies))
    states = np.array([puzzle.from_facelets(c.to_facelets()) for c in cubies])
    mismatches = 0
    for c, k, state in zip(cubies, chosen, states):
        ours = puzzle.to_facelets(puzzle.apply_move(state, puzzle.move(names[k])))
        mismatches += ours != (c * cube.MOVES[names[k]]).to_facelets()
    row("2x2x2 vs robot/cube.py: 10,000 states x 1 move", f"{mismatches} mismatches",
        f"{time.perf_counter() - started:.1f} s")


def search_rows(name: str, tables, heuristics, label: str, states, oracle: bool = True) -> None:
    puzzle = tables.space.puzzle
    search = IDAStar(tables, heuristics)
    times, nodes, lengths, oracle_times, agree = [], [], [], [], 0
    for state in states:
        started = time.perf_counter()
        found = search.solve(state)
        times.append(time.perf_counter() - started)
        nodes.append(search.nodes)
        lengths.append(len(found))
        if oracle:
            started = time.perf_counter()
            agree += len(bidirectional_search(puzzle, state, tables.moves)) == len(found)
            oracle_times.append(time.perf_counter() - started)
    row(f"{name} IDA* ({label})", f"median {1000 * statistics.median(times):.1f} ms, max {1000 * max(times):.0f} ms",
        f"{len(states)} states, mean length {statistics.mean(lengths):.2f}, median {statistics.median(nodes):,.0f} nodes")
    if oracle:
        row(f"{name} bidirectional BFS oracle", f"median {1000 * statistics.median(oracle_times):.1f} ms",
            f"same length as IDA* on {agree}/{len(states)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-3x3x3", action="store_true", help="leave out the 88M-state corner table")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"  {'measure':<50} {'value':<34} note")
    print("  " + "-" * 110)
    pocket, pocket_distance = build("2x2x2", "htm")
    build("2x2x2", "qtm")
    build("2x2x2", "htm", half_cost=2)
    pyraminx, pyraminx_distance = build("pyraminx", "htm")
    skewb, skewb_distance = build("skewb", "htm")
    check_against_cube_py(args.seed)
    for name, tables, distance in (("2x2x2", pocket, pocket_distance), ("pyraminx", pyraminx, pyraminx_distance),
                                   ("skewb", skewb, skewb_distance)):
        puzzle = tables.space.puzzle
        states = puzzle.random_states(100, rng)
        exact = PatternDatabase(tables.space, tables.space, distance)
        search_rows(name, tables, [exact], "exact table", states, oracle=False)
        part = Space(puzzle, [tables.space.components[-1]])
        weak = PatternDatabase(tables.space, part, distance_table(MoveTables(part, tables.moves), progress=False))
        search_rows(name, tables, [weak], f"{part.components[0].name} only", states[:10])
    if not args.skip_3x3x3:
        corners, corner_distance = build("3x3x3", "htm", orbits=["corners"])
        three_by_three(corners, corner_distance, rng)


def three_by_three(corners, corner_distance, rng) -> None:
    """IDA* on short 3x3x3 scrambles: max of the corner table and two 6-edge tables."""
    puzzle = corners.space.puzzle
    moves = corners.moves
    started = time.perf_counter()
    space = Space(puzzle, default_components(puzzle, moves))
    tables = MoveTables(space, moves)
    row("3x3x3 move tables, all components", f"{time.perf_counter() - started:.1f} s", repr(space)[6:70] + "...")
    started = time.perf_counter()
    heuristics = [PatternDatabase(space, corners.space, corner_distance)]
    for component in space.components:
        if component.name.startswith("edges") and "places" in component.name:
            part = Space(puzzle, [component])
            edges = distance_table(MoveTables(part, moves, reuse=tables), progress=False)
            heuristics.append(PatternDatabase(space, part, edges))
    row("3x3x3 two 6-edge distance tables", f"{time.perf_counter() - started:.1f} s", "665,280 states each")
    states = []
    for _ in range(20):  # SCRAMBLE_LENGTH random moves, never two of one face in a row
        scramble = []
        while len(scramble) < SCRAMBLE_LENGTH:
            move = moves[rng.integers(len(moves))]
            if not scramble or scramble[-1].base != move.base:
                scramble.append(move)
        states.append(puzzle.apply(puzzle.solved, [m.name for m in scramble]))
    search_rows(f"3x3x3 ({SCRAMBLE_LENGTH}-move scrambles)", tables, heuristics, "corners, 2 x 6 edges", states)


if __name__ == "__main__":
    main()
