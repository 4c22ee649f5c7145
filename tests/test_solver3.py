"""3x3x3 model, validation and coordinate tables (fast; the full tables are not built here)."""

import numpy as np
import pytest

from robot.solver3 import coords as C
from robot.solver3 import cube3


def test_r_move_matches_kociemba_layout():
    state = cube3.apply(cube3.solved(), cube3.parse_moves("R"))
    assert cube3.to_facelets(state) == "UUFUUFUUFRRRRRRRRRFFDFFDFFDDDBDDBDDBLLLLLLLLLUBBUBBUBB"


def test_facelets_round_trip_and_move_order():
    rng = np.random.default_rng(1)
    for _ in range(200):
        state = cube3.random_state(rng)
        parsed, centres = cube3.parse_facelets(cube3.to_facelets(state, "WRGYOB"))
        assert centres == "WRGYOB"
        assert all((a == b).all() for a, b in zip(parsed, state))
    for m in range(18):
        state = cube3.apply(cube3.solved(), [m] * 4)
        assert cube3.to_facelets(state) == cube3.SOLVED_FACELETS


def test_mirror_symmetry_conjugates_r_to_l_inverse():
    colours = cube3.colours_from_cubies(*(np.asarray(x)[None] for x in cube3.apply(cube3.solved(), [3])))
    mirror = next(i for i, m in enumerate(cube3.SYMMETRIES) if round(np.linalg.det(m)) == -1
                  and (m == np.diag([-1, 1, 1])).all())
    seen = "".join("URFDLB"[f] for f in cube3.conjugate_colours(colours, mirror)[0])
    assert seen == cube3.to_facelets(cube3.apply(cube3.solved(), cube3.parse_moves("L'")))


def _swap(text, i, j):
    s = list(text)
    s[i], s[j] = s[j], s[i]
    return "".join(s)


@pytest.mark.parametrize("make, error", [
    (lambda f: f[:53], cube3.LengthError),
    (lambda f: "R" + f[1:], cube3.ColourCountError),
    (lambda f: _swap(f, 0, 13), cube3.CentreError),  # two centres show U
    (lambda f: _swap(f, 8, 9), cube3.ImpossibleCornerError),  # URF corner in mirror order
    (lambda f: _swap(f, 5, 10), cube3.FlippedEdgeError),       # UR edge flipped
    (lambda f: f[:8] + "R" + "F" + f[10:20] + "U" + f[21:], cube3.TwistedCornerError),
])
def test_validation_names_the_problem(make, error):
    with pytest.raises(error):
        cube3.parse_facelets(make(cube3.SOLVED_FACELETS))


def test_duplicate_and_parity_errors():
    solved = cube3.SOLVED_FACELETS
    # Swap the UR and UF edges' stickers: a lone edge swap is a parity error.
    swapped = list(solved)
    for a, b in zip(cube3.EDGE_FACELETS[0], cube3.EDGE_FACELETS[1]):
        swapped[a], swapped[b] = swapped[b], swapped[a]
    with pytest.raises(cube3.ParityError):
        cube3.parse_facelets("".join(swapped))
    # Copy UF onto UR (and UR's colours elsewhere): UF twice.
    dup = list(solved)
    for a, b in zip(cube3.EDGE_FACELETS[0], cube3.EDGE_FACELETS[1]):
        dup[a] = solved[b]
    for a, b in zip(cube3.EDGE_FACELETS[7], cube3.EDGE_FACELETS[0]):
        dup[a] = solved[b]
    with pytest.raises(cube3.Cube3Error) as info:
        cube3.parse_facelets("".join(dup))
    assert isinstance(info.value, (cube3.DuplicateEdgeError, cube3.ImpossibleEdgeError, cube3.ColourCountError))


def test_move_tables_agree_with_cubie_moves():
    tables = C.build_move_tables()
    rng = np.random.default_rng(0)
    for _ in range(300):
        state = cube3.random_state(rng)
        m = int(rng.integers(18))
        a = C.phase_coords(state)
        b = C.phase_coords(cube3.multiply(state, cube3.move(m)))
        assert tables["twist"][a["twist"], m] == b["twist"]
        assert tables["flip"][a["flip"], m] == b["flip"]
        for key in ("slice", "u", "d"):
            assert tables["subset"][a[key], m] == b[key]
        assert tables["corners"][a["corners"], m] == b["corners"]


def test_coordinates_are_numbered_as_the_built_tables_expect():
    """Built tables are valid only for this numbering: changing it needs a new table format."""
    import hashlib

    tables = C.build_move_tables()
    pinned = {"twist": "939129a843f648c4", "flip": "9039eab0160efe07", "subset": "dfba440448f07bb2",
              "corners": "5813928c5e9276a8", "ud": "60717e1154b9609b"}
    assert {name: hashlib.sha256(np.ascontiguousarray(table, dtype=np.uint16).tobytes()).hexdigest()[:16]
            for name, table in tables.items()} == pinned
    state = cube3.apply(cube3.solved(), cube3.parse_moves("R U F' D2 L B' R2 U'"))
    assert C.phase_coords(state) == {"twist": 1007, "flip": 1308, "slice": 4552, "corners": 6996,
                                     "u": 10819, "d": 2235}
    assert (C.SOLVED_SLICE, C.SOLVED_U, C.SOLVED_D) == (11856, 0, 10200)


def _facelets_of(cp, co, ep, eo):
    faces = cube3.colours_from_cubies(*(np.asarray(x)[None] for x in (cp, co, ep, eo)))[0]
    return "".join("URFDLB"[f] for f in faces)


def test_impossible_and_duplicate_pieces_are_named():
    solved = list(cube3.SOLVED_FACELETS)
    # UR edge shows U and D (its R sticker swapped with DF's D sticker): no edge has U and D.
    text = solved[:]
    a, b = cube3.EDGE_FACELETS[0][1], cube3.EDGE_FACELETS[5][0]
    text[a], text[b] = text[b], text[a]
    with pytest.raises(cube3.ImpossibleEdgeError) as info:
        cube3.parse_facelets("".join(text))
    assert "UR" in info.value.edges
    # URF corner twice (in place of UFL); DL edge twice (in place of DR) keeps 9 of each colour.
    cp, ep = list(range(8)), list(range(12))
    cp[1], ep[4] = 0, 6
    with pytest.raises(cube3.DuplicateCornerError) as info:
        cube3.parse_facelets(_facelets_of(cp, [0] * 8, ep, [0] * 12))
    assert set(info.value.corners) == {"URF", "UFL"}
    # UF edge twice (in place of UR); DR twice (in place of DF).
    ep = list(range(12))
    ep[0], ep[5] = 1, 4
    with pytest.raises(cube3.DuplicateEdgeError) as info:
        cube3.parse_facelets(_facelets_of(list(range(8)), [0] * 8, ep, [0] * 12))
    assert {"UR", "UF"} <= set(info.value.edges) or {"DR", "DF"} <= set(info.value.edges)


def test_inverse_undoes_the_cube():
    rng = np.random.default_rng(2)
    for _ in range(50):
        state = cube3.random_state(rng)
        both = cube3.multiply(state, cube3.inverse(state))
        assert cube3.to_facelets(both) == cube3.SOLVED_FACELETS
    moves = cube3.parse_moves("R U2 F' D")
    state = cube3.apply(cube3.solved(), moves)
    assert cube3.to_facelets(cube3.apply(state, cube3.inverse_moves(moves))) == cube3.SOLVED_FACELETS


def test_each_view_maps_its_solutions_back_to_the_cube():
    """For cubes one or two moves from solved, the one view move sequence that solves a
    view must map back to a sequence that solves the cube (and no other sequence does)."""
    from robot.solver3 import api

    for scramble in ("R", "U'", "F2", "D L'", "B R2"):
        state = cube3.apply(cube3.solved(), cube3.parse_moves(scramble))
        n = len(scramble.split())
        candidates = [[m] for m in range(18)] if n == 1 else [[a, b] for a in range(18) for b in range(18)]
        for view, unmap in api.views(state):
            solving = [c for c in candidates if cube3.to_facelets(cube3.apply(view, c)) == cube3.SOLVED_FACELETS]
            assert solving, f"no {n}-move solution of a view of {scramble}"
            for c in solving:
                back = unmap(c)
                assert cube3.to_facelets(cube3.apply(state, back)) == cube3.SOLVED_FACELETS


def test_metric_costs_counted_by_hand():
    from robot.solver3 import api

    cases = {  # moves: (htm, qtm, axial)
        "U D' R2 L F": (5, 6, 3),
        "R L R'": (3, 3, 1),
        "U R D": (3, 3, 3),
        "F2 B2 U2 D2": (4, 8, 2),
        "": (0, 0, 0),
    }
    for text, (htm, qtm, axial) in cases.items():
        moves = cube3.parse_moves(text)
        assert (api.htm_cost(moves), api.qtm_cost(moves), api.axial_cost(moves)) == (htm, qtm, axial), text


def test_cli_refuses_robot_metric_and_2x2x2_only_options(capsys):
    from robot import cli

    assert cli.main(["solve", "--puzzle", "3x3x3", "--metric", "robot", "--start-grip", "RL", "--scramble", "R"]) == 2
    assert "does not apply to --metric robot" in capsys.readouterr().err  # robot plans: tests/test_robot3.py
    assert cli.main(["solve", "--time-limit", "1", "--scramble", "R"]) == 2
    assert "--puzzle 3x3x3" in capsys.readouterr().err


def _config_with_tables(tmp_path, directory):
    from robot import config as config_module

    text = (config_module.PROJECT_ROOT / "config.yaml").read_text().replace("dir: tables", f"dir: {directory}")
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def test_cli_says_how_to_build_missing_tables(tmp_path, capsys):
    from robot import cli

    config = _config_with_tables(tmp_path, tmp_path / "tables")
    assert cli.main(["solve", "--puzzle", "3x3x3", "--config", str(config), "--scramble", "R"]) == 2
    assert "cube-robot tables build --puzzle 3x3x3" in capsys.readouterr().err
    assert cli.main(["tables", "status", "--puzzle", "3x3x3", "--config", str(config)]) == 1
    out = capsys.readouterr().out
    assert "phase1.npy" in out and "not built yet" in out
    assert not (tmp_path / "tables" / "3x3x3").exists()  # status never builds


# -- with the full tables: built once per session (conftest session_tables3: about a minute
# unless the checkout's tables/3x3x3 are built, hence `slow`) ----------------------------------

@pytest.fixture(scope="session")
def search3(session_tables3):
    from robot import config as config_module
    from robot.solver3 import api, tables

    return api.load_search(tables.directory_for(config_module.load()), build=True)


def _solves(facelets, moves_text):
    state, _ = cube3.parse_facelets(facelets)
    return cube3.to_facelets(cube3.apply(state, cube3.parse_moves(moves_text))) == cube3.SOLVED_FACELETS


def _qtm_by_tokens(moves_text):
    return sum(2 if token.endswith("2") else 1 for token in moves_text.split())


@pytest.mark.slow
def test_random_cubes_solved_within_20_moves(search3):
    from robot.solver3 import api

    rng = np.random.default_rng(15)
    for _ in range(25):
        facelets = cube3.to_facelets(cube3.random_state(rng), "WRGYOB")  # any 6 symbols
        solution = api.solve(facelets, search=search3)
        assert _solves(facelets, solution.moves)
        assert solution.length == len(solution.moves.split()) <= 20
        assert solution.htm == solution.length and solution.solve_ms > 0


@pytest.mark.slow
def test_metrics_and_max_length_are_respected(search3):
    from robot.solver3 import api

    rng = np.random.default_rng(16)
    for _ in range(5):
        facelets = cube3.to_facelets(cube3.random_state(rng))
        qtm = api.solve(facelets, metric="qtm", max_length=26, search=search3)
        assert _solves(facelets, qtm.moves) and qtm.length == _qtm_by_tokens(qtm.moves) <= 26
        axial = api.solve(facelets, metric="axial", max_length=17, search=search3)
        assert _solves(facelets, axial.moves) and axial.length <= 17 and axial.htm <= 20
        assert axial.length == api.axial_cost(cube3.parse_moves(axial.moves))
    # A 3-move scramble: a solution of at most 3 moves exists and must be found; none of 2.
    short = api.solve(scramble="R U F", max_length=3, search=search3)
    assert _solves(short.facelets, short.moves) and short.length <= 3
    with pytest.raises(api.Unsolvable):
        api.solve(scramble="R U F", max_length=2, time_limit=5, search=search3)
    assert api.solve(cube3.SOLVED_FACELETS, search=search3).moves == ""


@pytest.mark.slow
def test_solutions_generator_yields_shorter_and_shorter(search3):
    from robot.solver3 import api

    facelets = cube3.to_facelets(cube3.random_state(np.random.default_rng(17)))
    found = list(api.solutions(facelets, time_limit=0.5, search=search3))
    assert found, "at least the first solution"
    lengths = [s.length for s in found]
    assert lengths == sorted(set(lengths), reverse=True)  # strictly decreasing
    assert all(_solves(facelets, s.moves) for s in found)
    times = [s.solve_ms for s in found]
    assert times == sorted(times)


@pytest.mark.slow
def test_cli_json_one_object_per_line(search3, monkeypatch, capsys):
    import io
    import json

    from robot import cli

    rng = np.random.default_rng(18)
    good = cube3.to_facelets(cube3.random_state(rng))
    bad = cube3.SOLVED_FACELETS[:20] + "R" + cube3.SOLVED_FACELETS[21:]  # a U-colour sticker missing
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{good}\n\n{bad}\n{cube3.SOLVED_FACELETS}\n"))
    code = cli.main(["solve", "--puzzle", "3x3x3", "--json", "--metric", "qtm", "-"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 2  # one input was invalid
    assert [line["ok"] for line in lines] == [True, False, True]
    assert _solves(good, lines[0]["moves"]) and lines[0]["length"] == _qtm_by_tokens(lines[0]["moves"])
    assert lines[0]["solve_ms"] > 0 and lines[0]["metric"] == "qtm"
    assert lines[1]["error_type"] == "ColourCountError" and "F3" in lines[1]["error"]
    assert lines[2]["moves"] == "" and lines[2]["length"] == 0
    # A time limit bounds the search, not the answer: how short a solution 0.3 s finds depends on the
    # machine's load (14 moves at load 11), so only --max-length may promise a length.
    code = cli.main(["solve", "--puzzle", "3x3x3", "--json", "--scramble", "R U R' F2", "--time-limit", "0.3"])
    line = json.loads(capsys.readouterr().out)
    assert code == 0 and line["length"] <= 20 and _solves(line["facelets"], line["moves"])
    code = cli.main(["solve", "--puzzle", "3x3x3", "--json", "--scramble", "R U R' F2", "--max-length", "4"])
    line = json.loads(capsys.readouterr().out)
    assert code == 0 and line["length"] <= 4 and _solves(line["facelets"], line["moves"])


@pytest.mark.slow
def test_corrupt_table_is_named_and_rebuilt(search3, tmp_path):
    import shutil

    from robot.solver3 import tables

    directory = tmp_path / "3x3x3"
    shutil.copytree(search3.directory, directory)
    with open(directory / "phase2.npz", "r+b") as f:
        f.seek(1000)
        byte = f.read(1)
        f.seek(1000)
        f.write(bytes([byte[0] ^ 0xFF]))
    assert "corrupt" in tables.status(directory)["phase2.npz"]
    with pytest.raises(tables.NotBuilt, match="phase2.npz"):
        tables.load(directory)
    messages = []
    rebuilt = tables.load(directory, build=True, log=messages.append, show_progress=False)
    assert any("phase2.npz" in m and "rebuilding" in m for m in messages)
    assert all(problem is None for problem in tables.status(directory).values())
    original = tables.load(search3.directory)
    assert all((rebuilt.phase2[k] == original.phase2[k]).all() for k in original.phase2)


@pytest.mark.slow  # builds the 2x2x2 tables (about 15 s of CPU)
def test_2x2x2_forced_rebuild_leaves_the_3x3x3_folder_alone(tmp_path, capsys):
    from robot import cli

    config = _config_with_tables(tmp_path, tmp_path / "tables")
    own = tmp_path / "tables" / "3x3x3"
    own.mkdir(parents=True)
    (own / "manifest.json").write_text('{"kept": true}')
    (tmp_path / "tables" / "stale.npy").write_text("x")  # not a file the build wrote: never deleted
    assert cli.main(["tables", "build", "--force", "--config", str(config)]) == 0
    assert (own / "manifest.json").read_text() == '{"kept": true}'
    assert (tmp_path / "tables" / "stale.npy").read_text() == "x"
    assert (tmp_path / "tables" / "manifest.json").exists()


@pytest.mark.slow
def test_two_solution_generators_can_run_interleaved(search3):
    """The planner may walk one cube's solutions while solving another: no shared state."""
    from robot.solver3 import api

    rng = np.random.default_rng(19)
    a, b = (cube3.to_facelets(cube3.random_state(rng)) for _ in range(2))
    first_a = api.solutions(a, time_limit=0.3, search=search3)
    found_a = [next(first_a)]
    found_b = list(api.solutions(b, time_limit=0.3, search=search3))
    found_a += list(first_a)
    assert all(_solves(a, s.moves) for s in found_a) and all(_solves(b, s.moves) for s in found_b)
    assert [s.length for s in found_a] == sorted({s.length for s in found_a}, reverse=True)


@pytest.mark.slow
def test_depth_first_fallback_when_phase2_levels_grow_too_wide(search3, monkeypatch):
    from robot.solver3 import api, phase2

    monkeypatch.setattr(phase2, "FRONTIER_CAP", 0)  # every vectorised phase 2 gives up at once
    calls = []
    original = search3._finish_one_by_one
    monkeypatch.setattr(search3, "_finish_one_by_one", lambda *a: calls.append(1) or original(*a))
    rng = np.random.default_rng(20)
    for _ in range(3):
        facelets = cube3.to_facelets(cube3.random_state(rng))
        solution = api.solve(facelets, search=search3)
        assert _solves(facelets, solution.moves) and solution.length <= 20
    assert calls
