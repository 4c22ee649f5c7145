"""Saving edits to the user's config file: the new text is checked before it replaces the old.

Commands that save what they measured or tuned (`calibrate timing --save`, `tune grippers --save`)
rewrite only their own lines and pass the whole new text here: it is written to a unique temporary
file beside the file really written (a symlink is followed: its target is replaced, the link stays),
loaded with the full schema, and only then moved over it (same permissions).  A text that does not
load raises ConfigError; a file that cannot be written (read-only, no space) raises SaveError; either
way the user's file is left exactly as it was.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import Callable

from . import config as config_module


class SaveError(RuntimeError):
    """The config file cannot be written (the message names the file or folder and why)."""


def save_target(path) -> Path:
    """The file a save of `path` writes: `path` itself, or the file its symlink(s) point to."""
    return Path(os.path.realpath(path))


def _refuse_read_only(target: Path, named: Path) -> None:
    # Checked from the mode bits, not os.access: root may write anything, but a file made read-only
    # says its owner does not want it changed.
    mode = target.stat().st_mode
    if not mode & stat.S_IWUSR or not os.access(target, os.W_OK):
        via = f" (the target of the link {named})" if target != named else ""
        raise SaveError(f"{target}{via} is read-only: not saved, the file is unchanged "
                        f"(make it writable, e.g. chmod u+w {target}, and save again)")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def replace_validated(path, new_text: str, check: Callable[[config_module.Config], None] | None = None
                      ) -> config_module.Config:
    """Replace the config file at `path` (or its symlink's target: save_target) with `new_text` if it loads
    (and passes `check`, which raises).  SaveError when it cannot be written; the file is then unchanged."""
    named = Path(path)
    path = save_target(named)
    _refuse_read_only(path, named)
    data = new_text.encode()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        raise SaveError(f"cannot write in {path.parent} ({exc.strerror}): not saved, {path} is unchanged") from None
    try:
        try:
            try:
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise SaveError(f"no space left in {path.parent}: saving needs {len(data)} bytes there "
                                f"(free some space and save again; {path} is unchanged)") from None
            raise SaveError(f"cannot write in {path.parent} ({exc.strerror}): not saved, "
                            f"{path} is unchanged") from None
        os.chmod(tmp, path.stat().st_mode & 0o777)  # keep the file's permissions
        try:
            loaded = config_module.load(tmp)  # the original is left untouched
        except config_module.ConfigError as exc:  # name the user's file, not our temporary copy
            message = str(exc).split(": ", 2)[-1]
            raise config_module.ConfigError(path, exc.line, exc.key_path, f"the edit would make this invalid: "
                                            f"{message} (the file was not changed)") from None
        if check is not None:
            check(loaded)
        os.replace(tmp, path)
        return loaded
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
