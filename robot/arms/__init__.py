"""The arms, driven over the link: what the bring-up commands, the run's pre-flight and the
simulated robot do with them.

  actions.py        drivers, one arm, grippers, homing (sensors or squared by eye), load/release
  readiness.py      arms_problems() / prepare_arms(): drivers on, every arm's position known and straight
  doctor_checks.py  check_arms, the run's last pre-flight check (robot/doctor/preflight.py)
  view_mover.py     ArmViewMover: each scan view's actions streamed to the arms (robot/vision/scan.py asks it)

The commands that use them are above, in robot/bringup/.
"""
