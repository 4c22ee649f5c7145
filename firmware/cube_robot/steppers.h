// The four stepper arms.  One Timer1 compare-A interrupt per step "tick":
// all arms of a move step on the same ticks (Bresenham against the arm with
// the most steps), so the two arms of a pair move together and a move lasts
// as long as its longest arm.  Speed follows a trapezoid (accelerate at
// `accel`, cruise at `max_speed`, decelerate) computed from the step index,
// so step times are exact and independent of when the ISR ran.
#ifndef STEPPERS_H
#define STEPPERS_H

#include <stdint.h>

enum { ARM_R, ARM_L, ARM_F, ARM_B, ARM_COUNT };

void stepper_init(void);  // pins (drivers enabled), Timer1 at 2 MHz
// Start a move: signed steps per arm (ARM_* order).  Caller: not running.
void stepper_start(const int16_t steps[ARM_COUNT]);
bool stepper_running(void);
// Stop now, mid-move (hardware e-stop).  Safe from any ISR.
void stepper_halt(void);
// Decelerate at `accel` to a stop (the `!` byte).  Safe from any ISR.
void stepper_stop_decelerating(void);
uint32_t stepper_stopped_us(void);  // micros() when the last move ended or stopped

#endif
