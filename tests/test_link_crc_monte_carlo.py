"""Monte Carlo of the line check: corrupted lines, at the fault proxy's rates, are never accepted.

Each line the host or the firmware really sends is pushed through the fault model of
robot/sim/fault_proxy.py (every byte independently hit with probability `rate`) with the
content faults: corrupt (a random different byte), drop, duplicate, and insert (a random
byte; the proxy's `delay` does not change content).  The damaged bytes are followed by a
clean next line, so a dropped newline merges the two as it would on the wire, and a
created newline splits a line in two.  Every newline-terminated segment of the stream is
then checked the way the firmware checks it (`*`, eight upper-case hex digits, CRC-32C of
everything before the `*`; no other format check is counted in our favour).  A segment
that passes and is not one of the lines really sent is an accepted corruption: there must
be none.  Vectorised with NumPy (an independent table-driven CRC-32C, checked against
protocol.frame): the 1,000,000-line run takes about 4.5 s, so it always runs.
"""

import numpy as np

from robot.link import protocol as P

RATES = (0.01, 0.02, 0.05)  # the byte-fault rates the fault proxy is used at (bench/faults.py, tests)
CONTENT_FAULTS = ("corrupt", "drop", "duplicate", "insert")
NEWLINE, STAR = 0x0A, 0x2A

# Lines as sent: commands at realistic and worst-case seqs, and every kind of reply.
COMMANDS = ["GRIP RL", "GRIP FB", "TURN R90 L-90", "TURN R-90 L-90", "TURN F180 B180", "TURN L-180", "DWELL 250",
            "MOTION S400 V2500 A62500", "SERVO O1000 C2000 G95", "HELLO", "STATUS", "RESET"]
SEQS = [1, 7, 12, 99, 130, 1000, 2147483647]
REPLIES = ["ok 17", "ok 17 dup", "err 12 QUEUE_FULL", "err - BAD_CHECKSUM", "rs 45", "done 5 130", "done 130 1210",
           "alarm ESTOP_BYTE 1520", "btn start",
           "status RUN q 3 run 41 done 40 acc 44 alarm NONE",
           "id cube-robot-fw 0.3.0 proto 3 board uno q 8 rx 64 last 2147483647 cut 0"]


def _lines() -> list[bytes]:
    lines = [P.command_line(seq, command) for seq in SEQS for command in COMMANDS]
    return lines + [P.frame(reply) for reply in REPLIES]


def _table() -> np.ndarray:
    table = np.zeros(256, np.uint32)
    for value in range(256):
        crc = value
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table[value] = crc
    return table


TABLE = _table()
HEX_VALUE = np.full(256, -1, np.int64)
HEX_VALUE[np.frombuffer(b"0123456789ABCDEF", np.uint8)] = np.arange(16)


def _damage(line: bytes, follower: bytes, count: int, rate: float, rng) -> tuple[np.ndarray, np.ndarray]:
    """`count` copies of `line` through the fault model, each followed by a clean `follower`.

    Returns (bytes, lengths) of the copies that came out different, padded to one width.
    """
    original = np.frombuffer(line, np.uint8)
    width = len(original)
    hit = rng.random((count, width)) < rate
    kind = rng.integers(0, len(CONTENT_FAULTS), (count, width))
    values = np.broadcast_to(original, (count, width)).copy()
    corrupt = hit & (kind == 0)
    values[corrupt] ^= rng.integers(1, 256, int(corrupt.sum())).astype(np.uint8)  # a different byte
    copies = np.ones((count, width), np.int64)
    copies[hit & (kind == 1)] = 0
    copies[hit & (kind >= 2)] = 2
    source = np.repeat(np.arange(count * width), copies.ravel())
    out = values.ravel()[source]
    second = np.zeros(len(source), bool)
    second[1:] = source[1:] == source[:-1]
    inserted = second & (kind.ravel()[source] == 3)
    out[inserted] = rng.integers(0, 256, int(inserted.sum())).astype(np.uint8)
    lengths = copies.sum(1)
    rows = np.repeat(np.arange(count), lengths)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    tail = np.frombuffer(follower, np.uint8)
    stream = np.zeros((count, lengths.max() + len(tail)), np.uint8)
    stream[rows, np.arange(len(out)) - starts[rows]] = out
    stream[np.arange(count)[:, None], lengths[:, None] + np.arange(len(tail))] = tail
    changed = (lengths != width) | (stream[:, :width] != original).any(1)
    return stream[changed], lengths[changed] + len(tail)


def _accepted_segments(stream: np.ndarray, lengths: np.ndarray, sent: set[bytes]) -> list[bytes]:
    """Newline-terminated segments that pass the firmware's frame and CRC checks and were not sent."""
    count, width = stream.shape
    inside = np.arange(width)[None, :] < lengths[:, None]
    newline = (stream == NEWLINE) & inside
    crc = np.full(count, P.CRC32_INIT, np.uint32)
    state = np.empty((count, width + 1), np.uint32)  # state[:, k]: CRC after k bytes of the segment
    state[:, 0] = crc
    segment_start = np.zeros(count, np.int64)
    starts = np.empty((count, width), np.int64)
    for column in range(width):
        updated = (crc >> 8) ^ TABLE[(crc ^ stream[:, column]) & 0xFF]
        crc = np.where(newline[:, column], np.uint32(P.CRC32_INIT), updated)
        state[:, column + 1] = crc
        starts[:, column] = segment_start
        segment_start = np.where(newline[:, column], column + 1, segment_start)
    digits = HEX_VALUE[stream]
    tail = 1 + P.CRC_HEX_DIGITS
    found = []
    for end in range(tail, width):  # `end` is a newline; `*` at end - tail
        candidate = newline[:, end] & (starts[:, end] <= end - tail) & (stream[:, end - tail] == STAR)
        hex_digits = digits[:, end - P.CRC_HEX_DIGITS:end]
        candidate &= (hex_digits >= 0).all(1)
        if not candidate.any():
            continue
        given = np.zeros(count, np.uint64)
        for d in range(P.CRC_HEX_DIGITS):
            given = (given << np.uint64(4)) | hex_digits[:, d].astype(np.uint64)
        computed = (state[:, end - tail] ^ np.uint32(P.CRC32_XOROUT)).astype(np.uint64)
        for row in np.nonzero(candidate & (given == computed))[0]:
            segment = stream[row, starts[row, end]:end + 1].tobytes()
            if segment not in sent:
                found.append(segment)
    return found


def _run(corrupted_lines: int, seed: int) -> tuple[int, list[bytes]]:
    rng = np.random.default_rng(seed)
    lines = _lines()
    sent = set(lines)
    total, accepted, batch = 0, [], 20000
    i = 0
    while total < corrupted_lines:
        line, follower = lines[i % len(lines)], lines[(i + 1) % len(lines)]
        rate = RATES[i % len(RATES)]
        stream, lengths = _damage(line, follower, batch, rate, rng)
        total += len(stream)
        accepted += _accepted_segments(stream, lengths, sent)
        i += 1
    return total, accepted


def test_the_vectorised_crc_is_crc32c_and_clean_lines_pass():
    lines = _lines()
    for line in lines:
        stream = np.frombuffer(line + line, np.uint8)[None, :]
        # Clean lines pass (the vectorised CRC agrees with protocol.frame), and lines in `sent` are not "accepted"...
        assert _accepted_segments(stream, np.array([stream.shape[1]]), set()) == [line, line]
        assert _accepted_segments(stream, np.array([stream.shape[1]]), {line}) == []
    assert max(len(line) for line in lines) <= P.MAX_REPLY


def test_a_known_bad_line_is_found():
    # ...and a line that passes but was not sent is reported (the check can fail).
    forged = P.frame("done 5 13")
    stream = np.frombuffer(forged, np.uint8)[None, :]
    assert _accepted_segments(stream, np.array([len(forged)]), {P.frame("done 5 130")}) == [forged]


def test_a_million_corrupted_lines_none_accepted():
    total, accepted = _run(1_000_000, seed=2026)
    assert total >= 1_000_000
    assert accepted == [], f"{len(accepted)} corrupted lines accepted, e.g. {accepted[:3]}"
