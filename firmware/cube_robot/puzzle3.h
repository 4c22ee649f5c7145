// The puzzle mode (`PUZZLE 2` / `PUZZLE 3`) and the 3x3x3 robot's rules (docs/robot3.md):
// a layer turn only while the other pair is closed with both grippers at 0, a tilt only
// while the other pair is open, a gripper closes only on a square arm.  The 2x2x2 mode
// (the default after power-up and every reset) does not use any of this.
#ifndef PUZZLE3_H
#define PUZZLE3_H

#include <stdint.h>

#include "motion.h"

bool puzzle3_on(void);
void puzzle3_set(bool three);  // caller: queue empty, no alarm
// Checks against the state after every queued action: an ERR_* code.
uint8_t puzzle3_check_turn(const int16_t steps[ARM_COUNT]);
uint8_t puzzle3_check_tilt(uint8_t pair);  // both arms of `pair`
uint8_t puzzle3_check_close(uint8_t arm_mask);
// An action was just queued (3x3x3 mode): where its arms will stand.
void puzzle3_queued(const action_t &action);

#endif
