"""Saving edits to the user's config file: the new text is checked before it replaces the old.

Commands that save what they measured or tuned (`calibrate timing --save`, `tune grippers --save`)
rewrite only their own lines and pass the whole new text here: it is written next to the file,
loaded with the full schema, and only then moved over the original (same permissions). A text that
does not load raises ConfigError and leaves the user's file exactly as it was.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable

from . import config as config_module


def replace_validated(path, new_text: str, check: Callable[[config_module.Config], None] | None = None
                      ) -> config_module.Config:
    """Replace the config file at `path` with `new_text` if it loads (and passes `check`, which raises)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(new_text)
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
