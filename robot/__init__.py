"""cube-robot: controller for a four-arm 2x2x2 cube-solving robot.

Pipeline: cube (model) -> vision (camera -> facelets) -> solver (plan) ->
link (serial protocol) -> firmware.  `sim` is the virtual robot; `run` and
`cli` tie them together.  Importing any module touches no hardware.
"""

__version__ = "0.1.0"
