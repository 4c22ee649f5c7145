// Gripper servos: 50 Hz pulses made in software from Timer1 compare B (no
// Servo library: Debian ships none, and simavr 1.6 shows no edges for
// Timer1 hardware PWM).  The four pulses go one after another, then the
// frame waits out its 20 ms.  A servo gets no pulses (stays limp) until it is
// first commanded, so power-up never moves a gripper.
#ifndef GRIPPERS_H
#define GRIPPERS_H

#include <stdint.h>

enum gripper_position { GRIPPER_LIMP, GRIPPER_OPEN, GRIPPER_CLOSED };

void gripper_init(void);  // after stepper_init(): Timer1 is running
// Command a gripper (ARM_* index); the width comes from the settings (that
// gripper's open_us / closed_us).
// The new width starts with the next frame (within 20 ms).
void gripper_set(uint8_t arm, gripper_position position);
// The same without keeping a closing in the reset memory: the regrip's closing
// started during a turn (a reset then must not close it onto a turning layer);
// gripper_keep() keeps it once the turn has ended.
void gripper_set_unkept(uint8_t arm, gripper_position position);
void gripper_keep(uint8_t arm);
// Stop a gripper's pulses (it stops driving where it is): a closing started
// during a turn that an alarm stopped.
void gripper_limp(uint8_t arm);
gripper_position gripper_get(uint8_t arm);
uint32_t gripper_opened_us(uint8_t arm);  // micros() of the last open command to its pair

#endif
