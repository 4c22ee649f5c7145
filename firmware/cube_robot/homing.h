// HOME <arm>: seek the homing sensor, back off until it releases and a little
// more, approach it slowly, then move by the arm's zero offset and call that
// zero.  One phase per move; the step ISR stops a move on the step where the
// input switches (stepper_start_watching).  motion.cpp runs it as an action.
#ifndef HOMING_H
#define HOMING_H

#include <stdint.h>

void homing_start(uint8_t arm);  // caller: drivers on, the arm's gripper open
// Call when the current phase's move has ended: starts the next.  True when
// homing is done; a sensor that does not switch latches an alarm (which
// flushes the queue).
bool homing_step(uint8_t arm);

#endif
