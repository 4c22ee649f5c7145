"""Load a benchmark script (bench/<name>.py) as a module, for tests of its pure helpers.

Benchmarks are scripts, not a package; their argument parsing runs only under __main__.
"""

import importlib.util
from pathlib import Path


def load_bench(name: str):
    path = Path(__file__).resolve().parents[1] / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"bench_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
