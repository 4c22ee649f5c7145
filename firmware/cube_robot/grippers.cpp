#include "grippers.h"

#include <Arduino.h>
#include <avr/interrupt.h>

#include "defaults.h"
#include "io.h"
#include "pins.h"
#include "protocol.h"
#include "steppers.h"
#include "system.h"

static const uint16_t TICKS_PER_US = 2;  // Timer1 at 2 MHz
static const uint16_t FRAME_TICKS = SERVO_FRAME_US * TICKS_PER_US;

static volatile uint16_t width_ticks[ARM_COUNT];
static volatile uint8_t enabled_mask;  // arms that get pulses
static gripper_position positions[ARM_COUNT];
static uint32_t opened_us[2];  // per pair (RL, FB): the last open command of either gripper
static_assert(ARM_R / 2 == 0 && ARM_L / 2 == 0 && ARM_F / 2 == 1 && ARM_B / 2 == 1, "arm / 2 is its pair");
static uint8_t slot;                  // the slot that starts at the next compare;
                                      // ARM_COUNT is the gap at the end of a frame
static uint16_t frame_used;

static inline void servo_pin(uint8_t arm, bool high) {
  switch (arm) {
    case ARM_R: PIN_WRITE(PIN_SERVO_R, high); break;
    case ARM_L: PIN_WRITE(PIN_SERVO_L, high); break;
    case ARM_F: PIN_WRITE(PIN_SERVO_F, high); break;
    default: PIN_WRITE(PIN_SERVO_B, high); break;
  }
}

void gripper_init(void) {
  PIN_MAKE_OUTPUT(PIN_SERVO_R);
  PIN_MAKE_OUTPUT(PIN_SERVO_L);
  PIN_MAKE_OUTPUT(PIN_SERVO_F);
  PIN_MAKE_OUTPUT(PIN_SERVO_B);
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
    width_ticks[arm] = DEFAULT_SERVO_OPEN_US * TICKS_PER_US;
    positions[arm] = GRIPPER_LIMP;
    // After a reset (not a power-up: system_init cleared the mask then), grippers that held the
    // cube hold it again at once, at the width they had; the others stay limp (no pulses), as
    // they were in the bootloader.  A reset never drops the cube.
    if (persist.closed_mask & (1 << arm)) {
      width_ticks[arm] = persist.closed_us * TICKS_PER_US;
      positions[arm] = GRIPPER_CLOSED;
      enabled_mask |= (uint8_t)(1 << arm);
    }
  }
  OCR1B = TCNT1 + 100;
  TIFR1 = (1 << OCF1B);
  TIMSK1 |= (1 << OCIE1B);
}

// Each compare starts one pulse and ends the one before, pins first so both
// edges sit at the same place in the ISR (width error < 1 us): ~70 cycles.
ISR(TIMER1_COMPB_vect) {
  uint8_t k = slot;
  if (k < ARM_COUNT && (enabled_mask & (1 << k))) servo_pin(k, true);
  if (k > 0) servo_pin(k - 1, false);
  if (k < ARM_COUNT) {
    uint16_t w = width_ticks[k];
    OCR1B += w;
    frame_used += w;
    slot = k + 1;
  } else {
    OCR1B += FRAME_TICKS - frame_used;
    frame_used = 0;
    slot = 0;
  }
}

void gripper_set_unkept(uint8_t arm, gripper_position position) {
  if (system_alarm() != ALARM_NONE) return;  // nothing moves while an alarm is latched
  uint16_t us = position == GRIPPER_CLOSED ? settings.closed_us[arm] : settings.open_us[arm];
  positions[arm] = position;
  if (position == GRIPPER_OPEN) opened_us[arm / 2] = micros();  // ARM_R, ARM_L: 0, 1; ARM_F, ARM_B: 2, 3
  uint8_t sreg = SREG;
  cli();
  width_ticks[arm] = us * TICKS_PER_US;
  enabled_mask |= (uint8_t)(1 << arm);
  SREG = sreg;
  if (position != GRIPPER_CLOSED) {
    persist.closed_mask &= (uint8_t)~(1 << arm);
    persist_save();
  }
}

void gripper_keep(uint8_t arm) {
  if (positions[arm] != GRIPPER_CLOSED) return;
  persist.closed_mask |= (uint8_t)(1 << arm);
  persist.closed_us = settings.closed_us[arm];
  persist_save();
}

void gripper_set(uint8_t arm, gripper_position position) {
  gripper_set_unkept(arm, position);
  if (system_alarm() == ALARM_NONE) gripper_keep(arm);
}

void gripper_limp(uint8_t arm) {
  uint8_t sreg = SREG;
  cli();
  enabled_mask &= (uint8_t)~(1 << arm);
  SREG = sreg;
  positions[arm] = GRIPPER_LIMP;
  persist.closed_mask &= (uint8_t)~(1 << arm);
  persist_save();
}

uint32_t gripper_opened_us(uint8_t arm) { return opened_us[arm / 2]; }

gripper_position gripper_get(uint8_t arm) { return positions[arm]; }
