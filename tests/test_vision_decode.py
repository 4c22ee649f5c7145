"""Joint decoding of sticker readings: real robot readings, synthetic perturbations, calibration."""

import json
from pathlib import Path

import numpy as np
import pytest

from robot import config
from robot.cube import CubeError, parse_facelets, random_state
from robot.vision import Calibration, ColourStats, DecodeResult, VisionError, colour_drift, decode
from robot.vision.colour import CalibrationError, lab_to_srgb, srgb_to_lab
from robot.vision.decode import SCHEMES, best_legal_labels, min_cost_assignment

_DATA = Path("shared") / "data" / "real-cube-readings" / "2x2x2-cases.json"
# ../shared from the project root (a git worktree one level deeper finds it one level further up).
REAL_CASES = next((p / _DATA for p in Path(__file__).resolve().parents[1].parents[:2] if (p / _DATA).exists()),
                  Path(__file__).resolve().parents[1].parent / _DATA)

# A typical sticker set (sRGB) for synthetic scans.
PALETTE = np.array([
    (235, 235, 230), (235, 215, 40), (185, 25, 35), (245, 110, 25), (25, 155, 70), (25, 75, 185),
], dtype=float)


def same_partition(a: str, b: str) -> bool:
    """Equal after a one-to-one renaming of the symbols."""
    return len(a) == len(b) and len(set(zip(a, b))) == len(set(a)) == len(set(b))


def random_cube(rng):
    """(facelets with symbols '0'..'5' = palette index, class per facelet); any scheme, mirror ones too."""
    facelets = random_state(rng).to_facelets("".join(str(d) for d in rng.permutation(6)))
    return facelets, np.array([int(c) for c in facelets])


def perturbed(rng, classes, palette=PALETTE, noise=5.0, shade=0.2, temperature=0.1, brightness=1.0):
    """Readings with sensor noise, per-sticker shading and a global per-channel gain (colour temperature)."""
    rgb = palette[classes] * rng.uniform(1 - shade, 1, (24, 1))
    rgb = rgb * rng.uniform(1 - temperature, 1 + temperature, 3) * brightness
    return np.clip(rgb + rng.normal(0, noise, rgb.shape), 0, 255)


def outcome(rgb, truth, **kwargs) -> str:
    try:
        result = decode(rgb, **kwargs)
    except VisionError:
        return "refused"
    return "exact" if same_partition(result.facelets, truth) else "wrong"


# ---------------------------------------------------------------------------
# Real readings (acceptance).


@pytest.fixture(scope="module")
def real_cases():
    if not REAL_CASES.exists():
        pytest.skip(f"real readings not found at {REAL_CASES} (shared/ data is not in this checkout)")
    return json.loads(REAL_CASES.read_text())["cases"]


def test_real_readings_decode_exactly_or_refuse_never_wrong(real_cases):
    assert len(real_cases) == 43
    results = {"exact": [], "refused": [], "wrong": []}
    for case in real_cases:
        results[outcome(case["rgb_URFDLB"], case["expected_URFDLB"])].append(case["id"])
    assert results["wrong"] == []
    assert len(results["exact"]) >= 41, results["refused"]
    assert len(results["exact"]) + len(results["refused"]) == 43


def test_real_refusals_name_stickers_and_say_what_to_do(real_cases):
    for case in real_cases:
        try:
            decode(case["rgb_URFDLB"])
        except VisionError as exc:
            assert exc.stickers, case["id"]
            assert all(len(name) == 2 and name[0] in "URFDLB" and name[1] in "1234" for name in exc.stickers)
            assert "rescan" in str(exc).lower()
            assert isinstance(exc, ValueError)
            assert exc.result is not None and len(exc.result.facelets) == 24


def test_real_decodes_are_legal_and_well_formed(real_cases):
    for case in real_cases[:12]:
        result = decode(case["rgb_URFDLB"])
        parsed = parse_facelets(result.facelets)
        # Letters are named by the decoded scheme: the DBL corner reads D, B, L.
        assert parsed.colours == "URFDLB"
        assert 0 < result.confidence <= 1
        assert result.margin >= config.defaults().decode.min_margin
        assert len(result.stickers) == 24 and result.worst_sticker in result.stickers
        assert set(result.colours) == set("URFDLB") and set(result.centres_rgb) == set("URFDLB")


def test_calibration_from_one_lighting_decodes_another(real_cases):
    # Calibrate on a solved cube seen by one robot, decode cubes read by others.
    solved = next(c for c in real_cases if c["id"] == "resolver:2x2x2-solved-02.txt")
    rgb = np.array(solved["rgb_URFDLB"], dtype=float)
    names = ["white", "red", "green", "yellow", "orange", "blue"]
    calibration = Calibration({name: ColourStats.from_rgb(rgb[4 * k:4 * k + 4]) for k, name in enumerate(names)})
    decoded = 0
    for case in real_cases:
        if case["id"] in ("derived:3x3x3-dark-01__9f07f67-corners.txt", "derived:3x3x3-dark-02__a5d4ee1-corners.txt"):
            continue
        result = decode(case["rgb_URFDLB"], calibration)
        assert same_partition(result.facelets, case["expected_URFDLB"]), case["id"]
        assert sorted(result.colours.values()) == sorted(names)
        decoded += 1
    assert decoded == 41


# ---------------------------------------------------------------------------
# Synthetic scans.


def test_clean_scans_of_random_cubes_decode_with_full_confidence():
    rng = np.random.default_rng(1)
    for _ in range(40):
        truth, classes = random_cube(rng)
        result = decode(perturbed(rng, classes, noise=2, shade=0.05, temperature=0.02))
        assert same_partition(result.facelets, truth)
        assert result.confidence == 1.0


@pytest.mark.parametrize("name, settings", [
    ("noise", dict(noise=12, shade=0.4, temperature=0.2, brightness=0.8)),
    ("dim, warm light", dict(noise=8, shade=0.3, temperature=0.25, brightness=0.3)),
    ("very noisy", dict(noise=20, shade=0.5, temperature=0.3, brightness=0.6)),
    ("garbage", dict(noise=40, shade=0.5, temperature=0.3, brightness=0.6)),
])
def test_perturbed_scans_are_exact_or_refused_never_wrong(name, settings):
    rng = np.random.default_rng(sum(map(ord, name)))
    counts = {"exact": 0, "refused": 0, "wrong": 0}
    for _ in range(75):
        truth, classes = random_cube(rng)
        counts[outcome(perturbed(rng, classes, **settings), truth)] += 1
    assert counts["wrong"] == 0, counts
    if name == "noise":
        assert counts["exact"] >= 70, counts


def test_colour_temperature_and_brightness_shifts_decode():
    rng = np.random.default_rng(3)
    for gains in [(1.2, 1.0, 0.7), (0.75, 0.95, 1.25), (0.45, 0.45, 0.45), (1.3, 1.3, 1.3)]:
        truth, classes = random_cube(rng)
        rgb = np.clip(PALETTE[classes] * gains + rng.normal(0, 3, (24, 3)), 0, 255)
        assert outcome(rgb, truth) == "exact", gains


def test_swapped_stickers_are_corrected_or_refused_never_wrong():
    # Two stickers swapped on the cube: the readings are an illegal cube
    # (unless the swap happens to give a legal one, which is then the answer).
    rng = np.random.default_rng(5)
    counts = {"exact": 0, "refused": 0, "wrong": 0}
    for _ in range(150):
        truth, classes = random_cube(rng)
        rgb = perturbed(rng, classes, noise=4, shade=0.15, temperature=0.1, brightness=0.9)
        i, j = rng.choice(24, 2, replace=False)
        rgb[[i, j]] = rgb[[j, i]]
        swapped = list(truth)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        try:
            parse_facelets("".join(swapped))
            truth = "".join(swapped)
        except CubeError:
            pass
        counts[outcome(rgb, truth)] += 1
    assert counts["wrong"] == 0, counts
    assert counts["refused"] >= 100, counts


def test_swapped_sticker_refusal_names_the_stickers():
    rng = np.random.default_rng(11)
    truth, classes = random_cube(rng)
    # Swap two stickers of very different colours (white and blue).
    i = int(np.flatnonzero(classes == 0)[0])
    j = int(np.flatnonzero(classes == 5)[0])
    rgb = perturbed(rng, classes, noise=3, shade=0.1)
    rgb[[i, j]] = rgb[[j, i]]
    with pytest.raises(VisionError) as caught:
        decode(rgb)
    names = {f"{'URFDLB'[k // 4]}{k % 4 + 1}" for k in (i, j)}
    assert names & set(caught.value.stickers), (names, caught.value.stickers)


def test_mirror_image_schemes_and_arbitrary_colours_decode():
    rng = np.random.default_rng(7)
    odd_colours = np.array([
        (120, 40, 160), (250, 150, 200), (20, 170, 170), (90, 60, 30), (200, 200, 90), (60, 60, 60),
    ], dtype=float)
    for _ in range(15):
        state = random_state(rng)
        scheme = "".join(str(d) for d in rng.permutation(6))
        mirror = scheme[0] + scheme[4] + scheme[2:4] + scheme[1] + scheme[5]  # R and L colours swapped
        for colours in (scheme, mirror):
            truth = state.to_facelets(colours)
            classes = np.array([int(c) for c in truth])
            result = decode(perturbed(rng, classes, palette=odd_colours, noise=3, shade=0.1))
            assert same_partition(result.facelets, truth), colours


def test_all_thirty_schemes_are_searched_and_solutions_are_legal():
    assert len(SCHEMES) == 30
    assert len({tuple(s) for s in SCHEMES}) == 30
    rng = np.random.default_rng(2)
    for _ in range(10):
        costs = rng.random((24, 6))
        cost, labels, _, _ = best_legal_labels(costs)
        parse_facelets("".join(str(c) for c in labels))  # raises if illegal
        assert cost == pytest.approx(costs[np.arange(24), labels].sum())


def test_best_legal_labels_is_exact_against_brute_force_near_a_cube():
    # Costs that favour one cube, plus noise: the DP must find the cheapest of a
    # large set of legal cubes (every cube one or two moves away).
    from robot.cube import MOVES

    rng = np.random.default_rng(4)
    for _ in range(5):
        start = random_state(rng)
        candidates = [start] + [start * m for m in MOVES.values()]
        candidates += [start * a * b for a in MOVES.values() for b in list(MOVES.values())[:9]]
        costs = rng.random((24, 6)) * 2
        truth = np.array([int(c) for c in start.to_facelets("012345")])
        costs[np.arange(24), truth] -= 1.5
        best = min(sum(costs[i, int(c)] for i, c in enumerate(s.to_facelets("012345"))) for s in candidates)
        cost, labels, _, _ = best_legal_labels(costs)
        assert cost <= best + 1e-9
        assert cost == pytest.approx(costs[np.arange(24), labels].sum())


def test_min_cost_assignment_matches_brute_force():
    import itertools

    rng = np.random.default_rng(9)
    for n in (1, 3, 5, 6):
        cost = rng.random((n, n))
        best = min(sum(cost[i, p[i]] for i in range(n)) for p in itertools.permutations(range(n)))
        assignment = min_cost_assignment(cost)
        assert sorted(assignment.tolist()) == list(range(n))
        assert cost[np.arange(n), assignment].sum() == pytest.approx(best)


# ---------------------------------------------------------------------------
# Input checks, settings, calibration file, drift.


@pytest.mark.parametrize("bad, message", [
    ([[0, 0, 0]] * 23, "shape"),
    ([[0, 0, 300]] * 24, "out of range"),
    ("not numbers", "24"),
])
def test_bad_readings_raise_vision_error(bad, message):
    with pytest.raises(VisionError, match=message):
        decode(bad)


def test_min_margin_setting_is_used():
    rng = np.random.default_rng(12)
    truth, classes = random_cube(rng)
    rgb = perturbed(rng, classes, noise=12, shade=0.4, temperature=0.2)
    strict = config.with_settings(config.defaults(), {"decode.min_margin": 99.0})
    with pytest.raises(VisionError, match="margin"):
        decode(rgb, config=strict)
    assert same_partition(decode(rgb).facelets, truth)


def test_calibration_round_trips_through_yaml(tmp_path):
    calibration = Calibration(
        {name: ColourStats(lab=[50 + k, k, -k], sigma=[3, 2, 1], samples=4) for k, name in enumerate("abcdef")},
        camera={"exposure": -6}, regions={},
    )
    path = calibration.save(tmp_path / "cal" / "colors.yaml")
    loaded = Calibration.load(path)
    assert loaded.names == list("abcdef")
    assert np.allclose(loaded.centres_lab(), calibration.centres_lab())
    assert loaded.camera == {"exposure": -6} and loaded.created == calibration.created
    assert np.allclose(loaded.colours["c"].sigma, [3, 2, 1])


def test_calibration_errors_name_file_and_key(tmp_path):
    path = tmp_path / "colors.yaml"
    with pytest.raises(CalibrationError, match="cannot read"):
        Calibration.load(path)
    path.write_text("version: 1\ncolours:\n  white: {sigma: [1, 1, 1]}\n")
    with pytest.raises(CalibrationError, match=r"colours\.white"):
        Calibration.load(path)
    path.write_text("version: 7\ncolours: {}\n")
    with pytest.raises(CalibrationError, match="version"):
        Calibration.load(path)


def test_region_gains_are_applied():
    from robot.vision.colour import RegionStats

    calibration = Calibration({n: ColourStats(lab=[50, 0, 0]) for n in "abcdef"},
                              regions={"F3": RegionStats([2, 1, 0.5])})
    corrected = calibration.correct(np.full((24, 3), 100.0))
    assert corrected[10].tolist() == [200, 100, 50]
    assert corrected[0].tolist() == [100, 100, 100]


def test_lab_conversion_round_trips_and_knows_white():
    assert np.allclose(srgb_to_lab([255, 255, 255]), [100, 0, 0], atol=0.01)
    rgb = np.random.default_rng(0).uniform(0, 255, (50, 3))
    assert np.allclose(lab_to_srgb(srgb_to_lab(rgb)), rgb, atol=0.01)


def test_colour_drift_reports_how_far_the_light_moved():
    rng = np.random.default_rng(6)
    names = ["white", "yellow", "red", "orange", "green", "blue"]
    calibration = Calibration({n: ColourStats.from_rgb([PALETTE[k]] * 4) for k, n in enumerate(names)})
    truth, classes = random_cube(rng)
    same_light = decode(perturbed(rng, classes, noise=2, shade=0.02, temperature=0.0), calibration)
    assert isinstance(same_light, DecodeResult)
    assert colour_drift(same_light, calibration).max_delta_e < 5
    warmer = np.clip(PALETTE[classes] * (1.15, 1.0, 0.7), 0, 255)
    drift = colour_drift(decode(warmer, calibration), calibration)
    assert drift.max_delta_e > 15 and drift.worst in names
    assert colour_drift(warmer, calibration).max_delta_e == pytest.approx(drift.max_delta_e, abs=1e-6)


def test_the_legal_cube_search_is_exact_per_batch_entry_with_forbidden_placements():
    # Each position allows two (piece, twist) placements (the rest cost inf), so
    # every legal cube of an entry can be listed; ties are made likely by whole
    # numbers.  The batched search must find each entry's cheapest legal cube.
    import itertools

    from robot.vision.legal import _best_cubes

    rng = np.random.default_rng(11)
    costs = np.full((6, 8, 8, 3), np.inf)
    allowed = []
    for b in range(6):
        truth = rng.permutation(8)
        twists = rng.integers(0, 3, 8)
        twists[-1] = -twists[:-1].sum() % 3
        entry = []
        for position in range(8):
            other = (int(rng.integers(8)), int(rng.integers(3)))
            options = [(int(truth[position]), int(twists[position])), other]
            for piece, twist in options:
                costs[b, position, piece, twist] = float(rng.integers(0, 4))
            entry.append(options)
        allowed.append(entry)
    totals, placements = _best_cubes(costs)
    for b, entry in enumerate(allowed):
        legal = [sum(costs[b, p, piece, twist] for p, (piece, twist) in enumerate(choice))
                 for choice in itertools.product(*entry)
                 if len({piece for piece, _ in choice}) == 8 and sum(t for _, t in choice) % 3 == 0]
        assert totals[b] == min(legal)
        chosen = placements[b]
        assert len(set(chosen[:, 0])) == 8 and chosen[:, 1].sum() % 3 == 0
        assert costs[b, np.arange(8), chosen[:, 0], chosen[:, 1]].sum() == totals[b]


def test_alternatives_finds_every_cube_the_unpruned_search_finds_below_the_limit():
    # alternatives() only builds the (position, scheme) entries whose lower bound
    # is below the limit; the entries it skips must never hold a cheaper cube.
    from robot.vision import legal

    rng = np.random.default_rng(5)
    for _ in range(6):
        truth = np.array([int(c) for c in random_state(rng).to_facelets("012345")])
        costs = rng.random((24, 6)) * 3
        costs[np.arange(24), truth] = rng.random(24) * 0.5
        cost, labels, scheme, placements = best_legal_labels(costs)
        limit = cost + 6.0
        corner = legal._corner_costs(costs)
        same = (legal._CLASS[:, None] == labels[legal.STICKERS][None, :, None, None, :]).all(axis=-1)
        every = []
        for position in range(8):  # the unpruned search: every scheme, differing at each position
            entry = corner.copy()
            entry[:, position] = np.where(same[:, position], np.inf, entry[:, position])
            every.append(entry)
        totals, found, _, _ = legal._solve_batch(np.concatenate(every), np.tile(np.arange(len(SCHEMES)), 8), limit)
        pruned_totals, pruned = legal.alternatives(costs, scheme, placements, limit)
        kept = {tuple(row) for row, total in zip(pruned.tolist(), pruned_totals) if total < limit}
        needed = {tuple(row) for row, total in zip(found.tolist(), totals) if total < limit}
        assert needed, "the test needs cubes below the limit"
        assert needed <= kept
