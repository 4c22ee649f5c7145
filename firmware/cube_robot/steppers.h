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

void stepper_init(void);  // pins (drivers OFF until MOTORS ON), Timer1 at 2 MHz
// Start a move: signed steps per arm (ARM_* order; positive = clockwise seen
// from outside the face, the DIR level is inverted for the arms in
// settings.invert_mask).  Caller: not running, drivers on.
void stepper_start(const int16_t steps[ARM_COUNT]);
// The same at `speed` steps/s (homing), stopping at once when the homing input
// becomes `watch` (SENSOR_ACTIVE / SENSOR_RELEASED; SENSOR_IGNORE: never).
enum sensor_watch { SENSOR_IGNORE, SENSOR_ACTIVE, SENSOR_RELEASED };
void stepper_start_watching(const int16_t steps[ARM_COUNT], uint16_t speed, uint8_t watch);
bool stepper_sensor_stopped(void);  // the last move ended because the sensor switched
bool stepper_running(void);
// Plan the running move's next ticks (main loop: the step ISR only pops them).
void stepper_poll(void);

// Drivers (the shared ENABLE pin).  Off: nothing holds the arms, so their
// positions are forgotten; the host re-establishes them (HOME or ZERO).
void stepper_enable(bool on);
bool stepper_enabled(void);
// Arm positions in steps from the arm's zero, counted step by step (also
// through an e-stop), in 0..steps_per_rev-1; known only after HOME or ZERO.
int16_t stepper_position(uint8_t arm);
uint8_t stepper_known_mask(void);
void stepper_set_zero(uint8_t arm_mask);   // these arms are at their zero now
void stepper_forget(uint8_t arm_mask);     // these arms' positions are unknown
// Stop now, mid-move (hardware e-stop).  Safe from any ISR.
void stepper_halt(void);
// Decelerate at `accel` to a stop (the `!` byte).  Safe from any ISR.
void stepper_stop_decelerating(void);
uint32_t stepper_stopped_us(void);  // micros() when the last move ended or stopped

#endif
