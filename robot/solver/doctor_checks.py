"""Doctor check of the solver: are its tables built, intact and for this robot?"""

from __future__ import annotations

from ..checks import FAIL, OK, WARN, Result
from ..config_types import Config


def check_tables(config: Config, args) -> list[Result]:
    """Are the solver tables built, intact and (robot-cost) built for this config's robot profile?

    With args.build_tables (the run's pre-flight) they are loaded now, built with a progress bar if
    needed, so a run never builds tables between the scan and the plan; they are left in
    args.tables for the run's solver (loaded once).
    """
    from ..plan import RobotProfile
    from ..tables_store import TableError, TableStore, tables_dir
    from .tables import load

    if getattr(args, "build_tables", False):
        try:
            loaded = load(config)
        except TableError as exc:
            return [Result(str(tables_dir(config)), FAIL, str(exc))]
        args.tables = loaded
        return [Result(str(loaded.directory), OK,
                       f"loaded ({loaded.nbytes / 2**20:.0f} MiB), valid for this robot profile")]

    directory = tables_dir(config)
    store = TableStore(directory)
    profile = RobotProfile.from_config(config).describe()
    results = []
    for name, prof in (("coords.npz", None), ("robot-cost.npy", profile)):
        item = str(directory / name)
        problem = store.problem(name, prof)
        if problem is None:
            detail = "valid" + (" for this robot profile" if prof is not None else "")
            results.append(Result(item, OK, detail))
        elif problem == "not built yet":
            results.append(Result(item, WARN, "not built yet; built automatically on first solve "
                                              "(or now with any solve command), takes a while once"))
        else:
            # Stale or damaged tables are rebuilt on next use; say so rather than fail.
            results.append(Result(item, WARN, f"{problem}; it will be rebuilt on next use"))
    return results
