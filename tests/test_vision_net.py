"""Cube-net pictures and the `cube-robot vision` commands."""

import json

import cv2
import numpy as np
import pytest

from robot import cli
from robot.cube import SOLVED_FACELETS
from robot.vision import decode
from robot.vision.net import DEFAULT_PALETTE, DOUBT, NET_POSITIONS, draw_net, net_for, save_net

STICKER = 48


def sticker_centre(name: str, sticker_px: int = STICKER):
    """Pixel (x, y) at the middle of a facelet, from the same layout constants as draw_net."""
    gap = max(2, sticker_px // 16)
    margin = sticker_px // 2
    face_px = 2 * sticker_px + 3 * gap
    column, row = NET_POSITIONS[name[0]]
    within = int(name[1]) - 1
    x = margin + column * face_px + gap + (within % 2) * (sticker_px + gap) + 3
    y = margin + row * face_px + gap + (within // 2) * (sticker_px + gap) + 3
    return x, y


def bgr_at(image, name):
    x, y = sticker_centre(name)
    return tuple(int(v) for v in image[y, x])


def test_net_paints_each_facelet_in_its_place():
    image = draw_net(SOLVED_FACELETS, labels=False)
    assert image.shape == (3 * (2 * STICKER + 9) + STICKER, 4 * (2 * STICKER + 9) + STICKER, 3)
    for face in "URFDLB":
        r, g, b = DEFAULT_PALETTE[face]
        for k in range(1, 5):
            assert bgr_at(image, f"{face}{k}") == (b, g, r), f"{face}{k}"


def test_net_uses_given_colours_and_readings():
    rgb = np.zeros((24, 3))
    rgb[9] = (10, 200, 30)  # F2
    image = draw_net(rgb=rgb, labels=False)
    assert bgr_at(image, "F2") == (30, 200, 10)
    assert bgr_at(image, "F1") == (0, 0, 0)
    custom = draw_net("aaaabbbbccccddddeeeeffff",
                      colours={"a": (1, 2, 3)}, labels=False)
    assert bgr_at(custom, "U1") == (3, 2, 1)
    assert bgr_at(custom, "R1") == (128, 128, 128)  # unknown symbol: grey


def test_doubtful_stickers_are_framed():
    image = draw_net(SOLVED_FACELETS, doubtful=["F3"], labels=False)
    x, y = sticker_centre("F3")
    assert tuple(int(v) for v in image[y - 2, x - 2]) == DOUBT  # the frame's corner
    x, y = sticker_centre("F4")
    assert tuple(int(v) for v in image[y - 2, x - 2]) != DOUBT


def test_labels_write_on_the_stickers():
    plain = draw_net(SOLVED_FACELETS, labels=False)
    labelled = draw_net(SOLVED_FACELETS, labels=True)
    assert np.count_nonzero(plain != labelled) > 500


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="24"):
        draw_net("UUU")
    with pytest.raises(ValueError):
        draw_net()


def test_save_net_writes_a_png_for_results_and_scans(tmp_path):
    rng = np.random.default_rng(0)
    palette = np.array([(235, 235, 230), (185, 25, 35), (25, 155, 70), (235, 215, 40), (245, 110, 25), (25, 75, 185)])
    rgb = palette[[i // 4 for i in range(24)]] + rng.normal(0, 2, (24, 3))
    result = decode(np.clip(rgb, 0, 255))
    path = save_net(result, tmp_path / "nets" / "decoded.png")
    image = cv2.imread(str(path))
    assert image is not None and image.shape[2] == 3
    # The decoded colours (scan centres) are painted, not the default palette.
    b, g, r = bgr_at(image, "U1")
    assert abs(r - 235) < 12 and abs(g - 235) < 12

    class FailedScan:  # what the scan module hands over when decoding failed
        decoded = None
        readings = rgb
        error = type("E", (), {"stickers": ("R2",)})()

    failed = net_for(FailedScan())
    x, y = sticker_centre("R2")
    assert tuple(int(v) for v in failed[y - 2, x - 2]) == DOUBT


def test_cli_show_and_decode(tmp_path, capsys):
    out = tmp_path / "net.png"
    assert cli.main(["vision", "show", "wwwwrrrrggggyyyyoooobbbb", "-o", str(out), "--doubtful", "F3,u1"]) == 0
    assert cv2.imread(str(out)) is not None
    assert cli.main(["vision", "show", "UUUU", "-o", str(out)]) == 2
    assert cli.main(["vision", "show", SOLVED_FACELETS, "-o", str(out), "--doubtful", "X9"]) == 2

    palette = [(235, 235, 230), (185, 25, 35), (25, 155, 70), (235, 215, 40), (245, 110, 25), (25, 75, 185)]
    readings = tmp_path / "readings.json"
    readings.write_text(json.dumps([palette[i // 4] for i in range(24)]))
    capsys.readouterr()
    assert cli.main(["vision", "decode", str(readings), "--no-calibration", "--json"]) == 0
    reply = json.loads(capsys.readouterr().out)
    assert reply["ok"] and reply["facelets"] == SOLVED_FACELETS and reply["confidence"] == 1.0
    assert cli.main(["vision", "decode", str(readings), "--no-calibration", "--net", str(out)]) == 0
    captured = capsys.readouterr()
    assert SOLVED_FACELETS in captured.out and "confidence" in captured.out
    assert f"net drawn to {out}" in captured.err

    # Two swapped stickers of very different colours: refused, exit 1, stickers named.
    swapped = [palette[i // 4] for i in range(24)]
    swapped[0], swapped[20] = swapped[20], swapped[0]
    readings.write_text(json.dumps(swapped))
    assert cli.main(["vision", "decode", str(readings), "--no-calibration", "--json"]) == 1
    reply = json.loads(capsys.readouterr().out)
    assert not reply["ok"] and reply["stickers"]

    readings.write_text("[1, 2")
    assert cli.main(["vision", "decode", str(readings), "--no-calibration"]) == 2
    assert "not valid JSON" in capsys.readouterr().err


def test_show_draws_the_helps_colour_letter_example_in_colour(tmp_path, capsys):
    out = tmp_path / "net.png"
    assert cli.main(["vision", "show", "wwwwrrrrggggyyyyoooobbbb", "-o", str(out)]) == 0
    image = cv2.imread(str(out))
    expected = {"U1": (245, 245, 245), "R1": (200, 20, 30), "F1": (20, 160, 60),
                "D1": (250, 215, 0), "L1": (255, 120, 0), "B1": (20, 60, 200)}  # sRGB
    for name, (r, g, b) in expected.items():
        assert tuple(int(v) for v in bgr_at(image, name)) == (b, g, r), name
    assert tuple(bgr_at(draw_net("WWWWRRRRGGGGYYYYOOOOBBBB", labels=False), "F2")) == (60, 160, 20)


def test_show_with_a_name_opencv_cannot_write_is_a_clear_error(tmp_path, capsys):
    code = cli.main(["vision", "show", "UUUURRRRFFFFDDDDLLLLBBBB", "-o", str(tmp_path / "x.jpgx")])
    err = capsys.readouterr().err
    assert code == 2 and "x.jpgx" in err and "could not write" in err and "Traceback" not in err
