"""The handshake survives byte faults (retry with backoff inside the handshake timeout).

Through the fault proxy on the mock firmware, with the default link settings (config.yaml):
at 2% byte faults (both directions) at least 99 of 100 handshakes succeed; at 5% each either
succeeds or stops with an error that names the link quality.  Before the retries, 13 of 100
failed at 2% (the long `id` line arrives whole only about 1 time in 5).
"""

import pytest

from robot import config as config_module
from robot.link import ports
from robot.link.driver import Link, LinkSettings
from robot.link.errors import HandshakeError
from robot.sim.fault_proxy import FaultProxy
from robot.sim.mock_firmware import MockFirmware

SETTINGS = LinkSettings.from_config(config_module.defaults())


def _handshakes(rate: float, count: int, seed: int) -> tuple[int, list[Exception], list[int]]:
    succeeded, failures, attempts = 0, [], []
    with MockFirmware("tcp") as mock, FaultProxy(mock.url, rate=rate, seed=seed) as proxy:
        for _ in range(count):
            link = Link(ports.open_port(proxy.url, SETTINGS.baud), SETTINGS, url=proxy.url)
            try:
                link.handshake()
                succeeded += 1
                attempts.append(link.handshake_attempts)
            except HandshakeError as exc:
                failures.append(exc)
            finally:
                link.close()
        assert len(proxy.faults) > 0  # the faults really happened
    return succeeded, failures, attempts


def test_handshakes_at_two_percent_faults_quick():
    succeeded, failures, attempts = _handshakes(0.02, 10, seed=5)
    assert succeeded == 10, failures
    assert max(attempts) > 1  # some needed a retry: the noise reached the handshake


@pytest.mark.slow
def test_99_of_100_handshakes_succeed_at_two_percent_faults():
    succeeded, failures, _ = _handshakes(0.02, 100, seed=12)
    assert succeeded >= 99, failures


def test_at_five_percent_faults_a_handshake_succeeds_or_names_the_link_quality():
    succeeded, failures, _ = _handshakes(0.05, 4, seed=3)
    assert succeeded + len(failures) == 4
    for exc in failures:
        assert "link quality" in str(exc) and "arrived damaged" in str(exc)


def test_a_failed_handshake_counts_the_damaged_lines_of_that_handshake_only():
    """link_stats' handshake_garbled adds up over the link's life (a reconnect hands the same link a second
    handshake): the failure's "D of N lines arrived damaged" is this handshake's (it said 150 of 142 after one)."""
    import dataclasses
    import re

    settings = dataclasses.replace(SETTINGS, handshake_timeout_s=1.0)
    with MockFirmware("tcp") as mock, FaultProxy(mock.url, rate=0.4, seed=2) as proxy:
        link = Link(ports.open_port(proxy.url, settings.baud), settings, url=proxy.url)
        link.stats["handshake_garbled"] = 500  # as left by an earlier handshake on this link
        try:
            with pytest.raises(HandshakeError) as error:
                link.handshake()
        finally:
            link.close()
    damaged, seen = map(int, re.search(r"(\d+) of (\d+) lines from the board arrived damaged", str(error.value)).groups())
    assert 0 < damaged <= seen
