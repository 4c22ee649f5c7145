#!/usr/bin/env bash
# Set up (see scripts/setup.sh) and run the whole test suite.
# Extra arguments go to pytest, e.g.  bash test.sh -k solver -x
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh
exec .venv/bin/python -m pytest "$@"
