"""A reset whose start-up line was lost in line noise (docs/protocol.md, lost banner): how the link finds it
mid-stream, and what its stop may claim.

The reset flushes the actions the board had queued, and until its first line it takes any seq above its
`last`: a later action's line is taken and, when it is a GRIP (the drivers are off, so a TURN is
refused), it runs and reports `done`.  A `done` for seq N then does not mean the actions before N ran, so
once the host has evidence of such a reset (Stream.reset_unseen) only actions the board confirmed one by
one count (their own `done`, `time <seq> <ms>`, its `last`), and the stop names the rest not known.

Evidence: drivers the host switched on are off (a TURN refused MOTORS_OFF), a `status` whose `acc` went
backwards (the driver's _stream_message), or TIME saying an action counted done never completed; each is
checked with HELLO, whose `boots` counts the reset.  These take the Link (driver.py) as `link`.
"""

from __future__ import annotations

from typing import NoReturn

from . import protocol as P
from .errors import UnseenResetError
from .stream import StreamEntry, running


def hello(link) -> P.Identity:
    """Who the board is now (its `boots` in the `id` line counts a reset whose start-up line was lost).
    On a noisy link the `id` line can be lost while its `ok` arrives: HELLO reads only, so it is asked
    again (as Link.where)."""
    return link.read_only(P.Identity, "HELLO", "`id` line", "HELLO requests")


def reset_since_seen(link) -> P.Identity | None:
    """The board's identity if it reset since the host last saw it (HELLO), else None."""
    boots = link.boots
    identity = hello(link)
    if link.boots == boots:
        return None
    link.stats["banners_lost"] += 1
    return identity


def check_refused_with_drivers_off(link, entry: StreamEntry) -> None:
    """Drivers we switched on are off: the board reset and its banner was lost (then stop), or not."""
    identity = reset_since_seen(link)
    if identity is not None:
        stop(link, f"refused {entry.command!r} with its drivers off", identity)


def check_never_ran(link) -> None:
    """Counted done by a later `done`, but TIME says the board does not have it among its last completed:
    a reset whose start-up line was lost (it flushed the queue, then the board took a later line), a
    refusal whose `err` was lost, or, when the board may have completed TIME_SLOTS actions since, only a
    duration no longer known (Stream.never_ran_if_last)."""
    stream = running(link._stream)
    for asked in [e for e in stream.entries if e.time_unknown and not e.time_judged]:
        asked.time_judged = True
        what = f"the board's TIME has no record of {asked.command!r} (counted done through a later one)"
        if stream.reset_unseen:
            stop(link, what, None)
        identity = reset_since_seen(link)
        if identity is not None:
            stop(link, what, identity)
        asked.never_ran = stream.never_ran_if_last(asked, link.status().done)
        if asked.never_ran:
            link.stats["refusals_found_by_time"] += 1
            link._stop_on_reject(asked, None)


def check_finished(link) -> None:
    """At the end of a stream after an unseen reset: every action counted done must be confirmed."""
    stream = running(link._stream)
    numbers = [e.index + 1 for e in stream.unproven() if e.index is not None]
    if numbers:
        stop(link, f"action(s) {numbers} were reported done only through later ones", None)


def stop(link, what: str, identity: P.Identity | None) -> NoReturn:
    """Send nothing more, ask TIME about each action counted done only because a later one was, and stop:
    the state is not known past the actions the board confirmed one by one."""
    stream = running(link._stream)
    stream.reset_unseen = True
    stream.next = len(stream.entries)
    pending = link.connection.lines.pending
    for seq in [s for s, line in pending.items() if line.entry is not None]:
        del pending[seq]  # a line the reset board takes may run: not one more
    link._collect_times()
    if identity is not None:
        stream.check_cut(identity)  # it cut an action: that stop names how far it got
    raise UnseenResetError(
        f"the board reset unseen (its start-up line was lost in line noise; it kept its memory, so not a power "
        f"cycle) and {what}: the reset dropped the actions it had queued and it may then have run later "
        "ones, so only the actions it reported done one by one are counted. Nothing moves on its own: check the "
        "cube sits straight, then scan it again"
    ).with_progress(stream.progress())
