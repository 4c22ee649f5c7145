#!/usr/bin/env bash
# Set up (see scripts/setup.sh) and run the robot.  With no robot attached this
# runs a full simulated solve.  Extra arguments go to `cube-robot run`.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh
exec .venv/bin/cube-robot run "$@"
