"""The puzzle engine (robot/puzzles/): published distance counts, and agreement with robot/cube.py.

The counts are the published ones: the engine computes
them from the YAML geometry alone, so a wrong move, orientation or ranker shows.
"""

from __future__ import annotations

import numpy as np
import pytest

from robot import cube
from robot.puzzles import load_puzzle, shipped_puzzles
from robot.puzzles.coords import Space, default_components
from robot.puzzles.search import IDAStar, PatternDatabase, SearchLimitError, bidirectional_search
from robot.puzzles.tables import MoveTables, depth_counts, distance_table

# 2x2x2 with DBL fixed, 3,674,160 states.
POCKET_HTM = [1, 9, 54, 321, 1847, 9992, 50136, 227536, 870072, 1887748, 623800, 2644]
POCKET_QTM = [1, 6, 27, 120, 534, 2256, 8969, 33058, 114149, 360508, 930588, 1350852, 782536, 90280, 276]
# 3x3x3 corners only: 8! * 3^7 states; the last three depths in HTM.
CORNERS_STATES = 88_179_840
CORNERS_LAST_DEPTHS = [45_391_616, 15_139_616, 64_736]


def full_tables(name: str, metric: str = "htm", orbits=None) -> MoveTables:
    puzzle = load_puzzle(name)
    moves = puzzle.search_moves(metric)
    return MoveTables(Space(puzzle, default_components(puzzle, moves, orbits)), moves)


@pytest.fixture(scope="module")
def pocket_htm():
    tables = full_tables("2x2x2", "htm")
    return tables, distance_table(tables, progress=False)


def test_shipped_puzzles_include_a_non_cube():
    assert {"2x2x2", "3x3x3", "pyraminx", "skewb"} <= set(shipped_puzzles())


def test_2x2x2_half_turn_metric_counts(pocket_htm):
    tables, distance = pocket_htm
    assert tables.space.size == 3_674_160
    assert depth_counts(distance) == POCKET_HTM


def test_2x2x2_quarter_turn_metric_counts():
    tables = full_tables("2x2x2", "qtm")
    assert [m.name for m in tables.moves] == ["U", "U'", "R", "R'", "F", "F'"]
    assert depth_counts(distance_table(tables, progress=False)) == POCKET_QTM


def test_bucketed_dijkstra_with_half_turns_costing_two_is_the_quarter_turn_metric():
    tables = full_tables("2x2x2", "htm")
    costs = [1 if move.is_quarter else 2 for move in tables.moves]
    assert depth_counts(distance_table(tables, costs=costs, progress=False)) == POCKET_QTM


def test_2x2x2_distances_agree_state_by_state_with_the_robot_solver_table(pocket_htm):
    from robot import config as config_module
    from robot.solver import tables as solver_tables
    from robot.solver.coords import cubie_coords

    tables, distance = pocket_htm
    loaded = solver_tables.load(config_module.load(), log=lambda m: None)  # the session's, built once
    coords, reference = loaded.coords, loaded.metric("htm")
    index_of = coords.scalar_indexer()
    puzzle = tables.space.puzzle
    rng = np.random.default_rng(15)
    for _ in range(300):
        state = cube.random_state(rng)
        engine_state = puzzle.from_facelets(state.to_facelets())
        ours = distance[tables.space.index(engine_state)][0]
        assert ours == reference[index_of(*cubie_coords(state))]


def test_2x2x2_agrees_with_cube_py_on_10000_random_states_and_moves():
    """Two independent models: the same moves on the same state give the same facelets."""
    puzzle = load_puzzle("2x2x2")
    rng = np.random.default_rng(2026)
    names = list(cube.MOVES)  # U R F D L B and x y z, every power
    assert set(names) == set(puzzle.moves) | set(puzzle.rotations)
    cubies = [cube.random_state(rng) for _ in range(10_000)]
    states = np.array([puzzle.from_facelets(c.to_facelets()) for c in cubies])
    corners = puzzle.orbit("corners")  # same conventions, so the same CP and CO
    assert states[:, corners.perm_slots].tolist() == [list(c.cp) for c in cubies]
    assert states[:, corners.ori_slots].tolist() == [list(c.co) for c in cubies]
    for _ in range(3):  # three random moves in a row, compared after each
        chosen = rng.integers(0, len(names), len(cubies))
        after = np.empty_like(states)
        for k, name in enumerate(names):
            rows = chosen == k
            after[rows] = puzzle.apply_move(states[rows], puzzle.move(name))
        canonical = puzzle.canonical(after)
        cubies = [c * cube.MOVES[names[k]] for c, k in zip(cubies, chosen)]
        for moved, state, relabelled in zip(cubies, after, canonical):
            assert puzzle.to_facelets(state) == moved.to_facelets()
            assert puzzle.to_facelets(relabelled) == moved.canonical().to_facelets()
        states = after


def test_3x3x3_facelets_follow_kociemba_layout():
    puzzle = load_puzzle("3x3x3")
    assert puzzle.to_facelets(puzzle.apply(puzzle.solved, "R")) == (
        "UUFUUFUUFRRRRRRRRRFFDFFDFFDDDBDDBDDBLLLLLLLLLUBBUBBUBB")
    assert puzzle.to_facelets(puzzle.apply(puzzle.solved, "U")) == (
        "UUUUUUUUUBBBRRRRRRRRRFFFFFFDDDDDDDDDFFFLLLLLLLLLBBBBBB")


# Kociemba's cubie-level definitions of R and F (pieces at each place, orientations).
KOCIEMBA_MOVES = {
    "R": ("DFR UFL ULB URF DRB DLF DBL UBR", [2, 0, 0, 1, 1, 0, 0, 2],
          "FR UF UL UB BR DF DL DB DR FL BL UR", [0] * 12),
    "F": ("UFL DLF ULB UBR URF DFR DBL DRB", [1, 2, 0, 0, 2, 1, 0, 0],
          "UR FL UL UB DR FR DL DB UF DF BL BR", [0, 1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0]),
}


@pytest.mark.parametrize("move", sorted(KOCIEMBA_MOVES))
def test_3x3x3_cubie_moves_match_kociemba(move):
    puzzle = load_puzzle("3x3x3")
    state = puzzle.apply(puzzle.solved, move)
    corners, edges = puzzle.orbit("corners"), puzzle.orbit("edges")
    cp, co, ep, eo = KOCIEMBA_MOVES[move]
    assert " ".join(corners.pieces[i] for i in state[corners.perm_slots]) == cp
    assert state[corners.ori_slots].tolist() == co
    assert " ".join(edges.pieces[i] for i in state[edges.perm_slots]) == ep
    assert state[edges.ori_slots].tolist() == eo


@pytest.mark.parametrize("name", ["2x2x2", "3x3x3", "pyraminx", "skewb"])
def test_moves_have_their_order_and_inverses_and_facelets_round_trip(name):
    puzzle = load_puzzle(name)
    states = puzzle.random_states(50, np.random.default_rng(3))
    for move in list(puzzle.moves.values()) + list(puzzle.rotations.values()):
        if move.power == 1:
            turned = states
            for _ in range(move.order):
                turned = puzzle.apply_move(turned, move)
            assert np.array_equal(turned, states), move.name
        back = puzzle.apply_move(puzzle.apply_move(states, move), puzzle.inverse(move))
        assert np.array_equal(back, states), move.name
        assert not np.array_equal(puzzle.apply_move(states, move), states), move.name
    for state in states:
        assert np.array_equal(puzzle.from_facelets(puzzle.to_facelets(state)), state)


def test_pyraminx_state_count_and_gods_number():
    distance = distance_table(full_tables("pyraminx"), progress=False)
    counts = depth_counts(distance)
    assert sum(counts) == 933_120  # without tips
    assert len(counts) - 1 == 11  # God's number in face turns
    assert counts[:2] == [1, 8]


def test_skewb_state_count_and_gods_number():
    distance = distance_table(full_tables("skewb"), progress=False)
    counts = depth_counts(distance)
    assert sum(counts) == 3_149_280
    assert len(counts) - 1 == 11  # God's number (HTM)
    assert counts[:2] == [1, 8]


@pytest.mark.slow  # exhaustive: a breadth-first search over all 88,179,840 corner states
def test_3x3x3_corner_table_reproduces_the_published_depth_counts():
    """The full corner BFS: 88,179,840 entries, uint8 (about 25 s here; bench/puzzles.py measures it)."""
    tables = full_tables("3x3x3", orbits=["corners"])
    assert [c.size for c in tables.space.components] == [40_320, 2_187]
    counts = depth_counts(distance_table(tables, progress=False))
    assert sum(counts) == CORNERS_STATES
    assert counts[:3] == [1, 18, 243]  # 18 turns; 243 = 18 * 15 - 27 commuting pairs
    assert counts[-3:] == CORNERS_LAST_DEPTHS


def test_ida_star_matches_the_bidirectional_oracle_on_small_puzzles():
    rng = np.random.default_rng(7)
    for name in ("2x2x2", "pyraminx", "skewb"):
        tables = full_tables(name)
        puzzle = tables.space.puzzle
        # A weak heuristic on purpose (one component only): IDA* must still be optimal.
        part = Space(puzzle, [tables.space.components[-1]])
        heuristic = PatternDatabase(tables.space, part, distance_table(MoveTables(part, tables.moves),
                                                                       progress=False))
        search = IDAStar(tables, [heuristic])
        for state in puzzle.random_states(3, rng, moves=7):
            found = search.solve(state)
            oracle = bidirectional_search(puzzle, state, tables.moves)
            assert len(found) == len(oracle), name
            assert np.array_equal(puzzle.apply(state, found), puzzle.solved)
            assert np.array_equal(puzzle.canonical(puzzle.apply(state, oracle)), puzzle.solved)


def test_ida_star_with_the_exact_table_walks_straight_down(pocket_htm):
    tables, distance = pocket_htm
    search = IDAStar(tables, [PatternDatabase(tables.space, tables.space, distance)])
    puzzle = tables.space.puzzle
    for state in puzzle.random_states(5, np.random.default_rng(11)):
        found = search.solve(state)
        assert len(found) == distance[tables.space.index(state)][0]
        assert search.nodes <= len(found) + 1
    with pytest.raises(SearchLimitError):
        search.solve(puzzle.random_states(1, np.random.default_rng(12))[0], max_depth=2)


def test_bidirectional_oracle_solves_short_3x3x3_scrambles_optimally_or_shorter():
    puzzle = load_puzzle("3x3x3")
    moves = puzzle.search_moves("htm")
    for scramble in ("R U R' U'", "F2 L' D B2 U R'", "R L U2 R' L' B2"):
        state = puzzle.apply(puzzle.solved, scramble)
        solution = bidirectional_search(puzzle, state, moves)
        assert len(solution) <= len(scramble.split())
        assert puzzle.to_facelets(puzzle.apply(state, solution)) == puzzle.solved_facelets
    # "R U R' U'" has no 3-move equivalent: the oracle must find exactly 4.
    assert len(bidirectional_search(puzzle, puzzle.apply(puzzle.solved, "R U R' U'"), moves)) == 4


def test_progress_bar_only_for_long_builds_and_on_stderr(capsys, monkeypatch):
    from robot.puzzles import tables as tables_module

    tables = full_tables("pyraminx")
    distance_table(tables, progress=True)  # forced, but short: under SHOW_PROGRESS_AFTER
    quiet = capsys.readouterr()
    assert quiet.err == "" and quiet.out == ""
    monkeypatch.setattr(tables_module, "SHOW_PROGRESS_AFTER", 0.0)
    distance_table(tables, progress=True)
    drawn = capsys.readouterr()
    assert drawn.out == ""
    assert "pyraminx distance table" in drawn.err and "933,120 states, deepest 11" in drawn.err
    distance_table(tables)  # default: only on a terminal, and pytest's stderr is not one
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("k, even", [(1, False), (5, False), (6, True), (7, True)])
def test_permutation_ranker_is_a_bijection(k, even):
    from math import factorial

    from robot.puzzles.coords import rank_permutation, unrank_permutation

    size = factorial(k) // (2 if even else 1)
    perms = unrank_permutation(np.arange(size), k, even)
    assert np.all(np.sort(perms, axis=1) == np.arange(k))  # each row a permutation
    assert len({row.tobytes() for row in perms}) == size
    assert np.array_equal(rank_permutation(perms, even), np.arange(size))
    if even and k > 1:
        inversions = [sum(a > b for i, a in enumerate(p) for b in p[i + 1:]) for p in perms.tolist()]
        assert all(n % 2 == 0 for n in inversions)


def test_combination_and_orientation_rankers_are_bijections():
    from math import comb

    from robot.puzzles.coords import (rank_combination, rank_orientation, unrank_combination,
                                      unrank_orientation)

    masks = unrank_combination(np.arange(comb(12, 4)), 12, 4)
    assert np.all(masks.sum(axis=1) == 4)
    assert len({row.tobytes() for row in masks}) == comb(12, 4)
    assert np.array_equal(rank_combination(masks), np.arange(comb(12, 4)))
    oris = unrank_orientation(np.arange(3 ** 7), 8, 3, constrained=True)
    assert np.all(oris.sum(axis=1) % 3 == 0)
    assert np.array_equal(rank_orientation(oris, 3, constrained=True), np.arange(3 ** 7))
    free = unrank_orientation(np.arange(2 ** 4), 4, 2, constrained=False)
    assert len({row.tobytes() for row in free}) == 16


@pytest.mark.parametrize("name", ["2x2x2", "skewb"])
def test_holding_the_puzzle_another_way_does_not_change_its_distance(name):
    """canonical(state * rotation) is the same puzzle re-held: solved in as many moves."""
    tables = full_tables(name)
    distance = distance_table(tables, progress=False)
    puzzle = tables.space.puzzle
    states = puzzle.random_states(200, np.random.default_rng(4))
    before = distance[tables.space.index(states)]
    rotations = list(puzzle.rotations.values())
    for rotation in rotations:
        turned = puzzle.canonical(puzzle.apply_move(states, rotation))
        assert not np.array_equal(turned, states), rotation.name
        assert np.array_equal(distance[tables.space.index(turned)], before), rotation.name


def test_decode_orbit_reads_a_batch_and_marks_the_places_no_piece_looks_like():
    puzzle = load_puzzle("3x3x3")
    states = puzzle.random_states(50, np.random.default_rng(6))
    codes = puzzle.facelet_codes(states)
    for orbit in puzzle.orbits:
        pieces, orientations, ok = puzzle.decode_orbit(codes, orbit.name)
        assert ok.all()
        assert np.array_equal(pieces, states[:, orbit.perm_slots])
        if orbit.ori_offset is not None:
            assert np.array_equal(orientations, states[:, orbit.ori_slots])
    urf = puzzle.orbit("corners").pieces.index("URF")
    u_face = puzzle.face_names.index("U")
    broken = np.array(codes[:1])
    broken[0, puzzle._decoders["corners"][0][urf]] = u_face  # a corner showing U three times
    pieces, orientations, ok = puzzle.decode_orbit(broken, "corners")
    assert ok[0].tolist() == [place != urf for place in range(8)]
    assert pieces[0, urf] == orientations[0, urf] == -1


def test_lexicographic_combination_ranker_follows_itertools_order():
    from itertools import combinations
    from math import comb

    from robot.puzzles.coords import rank_combination_lexicographic, unrank_combination_lexicographic

    for n, k in [(12, 4), (7, 3), (5, 0), (5, 5)]:
        masks = np.zeros((comb(n, k), n), dtype=bool)
        for row, places in enumerate(combinations(range(n), k)):
            masks[row, list(places)] = True
        assert np.array_equal(rank_combination_lexicographic(masks), np.arange(comb(n, k)))
        assert np.array_equal(unrank_combination_lexicographic(np.arange(comb(n, k)), n, k), masks)


def test_one_state_rankers_agree_with_the_vectorised_ones():
    from math import comb

    from robot.puzzles.coords import (combination_rank, combination_rank_lexicographic, orientation_rank,
                                      permutation_rank, rank_combination, rank_combination_lexicographic,
                                      rank_orientation, rank_permutation, unrank_combination,
                                      unrank_orientation, unrank_permutation)

    perms = unrank_permutation(np.arange(5040), 7)
    assert [permutation_rank(p) for p in perms.tolist()] == rank_permutation(perms).tolist()
    assert permutation_rank(()) == 0 and permutation_rank((0,)) == 0
    for constrained in (True, False):
        oris = unrank_orientation(np.arange(3 ** 5), 6, 3, constrained)
        assert ([orientation_rank(o, 3, constrained) for o in oris.tolist()]
                == rank_orientation(oris, 3, constrained).tolist())
    for k in (0, 3, 6):
        masks = unrank_combination(np.arange(comb(9, k)), 9, k)
        assert [combination_rank(m) for m in masks.tolist()] == rank_combination(masks).tolist()
        assert ([combination_rank_lexicographic(m) for m in masks.tolist()]
                == rank_combination_lexicographic(masks).tolist())


@pytest.mark.parametrize("tracked, ordered, lexicographic", [
    ([8, 9, 10, 11], False, False), ([0, 5, 11], True, False), ([3], True, False),
    ([8, 9, 10, 11], True, True), ([2, 7], False, True)])
def test_pieces_component_fast_move_table_equals_the_state_by_state_one(tracked, ordered, lexicographic):
    from robot.puzzles.coords import PiecesComponent
    from robot.puzzles.tables import table_from_states

    puzzle = load_puzzle("3x3x3")
    moves = puzzle.search_moves("htm")
    edges = puzzle.orbit("edges")
    component = PiecesComponent("tracked edges", edges.perm_slots, tracked, ordered, lexicographic)
    fast = component.move_table(moves)
    assert np.array_equal(fast, table_from_states(puzzle, component, moves))
    assert len(np.unique(fast[:, 0])) == component.size  # a move permutes the values
