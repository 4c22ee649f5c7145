#include "system.h"

#include <Arduino.h>
#include <avr/interrupt.h>
#include <stddef.h>
#include <string.h>

#include "defaults.h"
#include "io.h"
#include "motion.h"
#include "pins.h"
#include "protocol.h"
#include "report.h"
#include "steppers.h"

settings_t settings;
persist_t persist __attribute__((section(".noinit")));
volatile persist_part_t persist_part __attribute__((section(".noinit")));

static volatile uint8_t alarm_code;       // set from ISRs, cleared by RESET
static volatile uint32_t alarm_trigger_us;
static volatile bool alarm_was_moving;    // steppers were running when it latched
static bool alarm_flushed;                // queue flushed for the current alarm
static volatile bool alarm_reported;      // `alarm` line sent for the current alarm
static volatile bool status_requested;

static bool button_level_pressed;         // debounced state of the start button
static bool button_report_pending;
static uint32_t button_changed_ms;

static const uint32_t PERSIST_MAGIC = 0x43554245UL;  // "CUBE"

static uint32_t persist_checksum(void) {
  // Fletcher-style sums over every byte before `check` (about 50 us): all-zero RAM (a
  // power-up in simavr) gives the magic, which no zero check word matches; random RAM
  // passes with odds of 1 in 2^32.
  const uint8_t *bytes = (const uint8_t *)&persist;
  uint16_t a = 0, b = 0;
  for (uint8_t i = 0; i < offsetof(persist_t, check); i++) {
    a += bytes[i];
    b += a;
  }
  return PERSIST_MAGIC ^ (((uint32_t)b << 16) | a);
}

void persist_set_part(uint16_t done) {
  persist_part.done = done;
  persist_part.done_inv = (uint16_t)~done;
}

void persist_record_time(uint32_t seq, uint16_t ms) {
  uint8_t slot = persist.time_next % TIME_SLOTS;
  persist.time_seq[slot] = seq;
  persist.time_ms[slot] = ms;
  persist.time_next = (uint8_t)((slot + 1) % TIME_SLOTS);
}

bool persist_find_time(uint32_t seq, uint16_t *ms) {
  for (uint8_t slot = 0; slot < TIME_SLOTS; slot++) {
    if (seq != 0 && persist.time_seq[slot] == seq) {
      *ms = persist.time_ms[slot];
      return true;
    }
  }
  return false;
}

void persist_save(void) { persist.check = persist_checksum(); }

// Latches the first alarm; later ones (while latched) only stop harder.  Except that the e-stop
// input after a stop byte `!` makes the alarm ESTOP_INPUT, reported again: a person pressed it (a
// host may clear an ESTOP_BYTE it knows line noise made, never a press).
static void latch_alarm(uint8_t code) {
  if (alarm_code == ALARM_ESTOP_BYTE && code == ALARM_ESTOP_INPUT) {
    alarm_code = code;
    alarm_reported = false;
    return;
  }
  if (alarm_code != ALARM_NONE) return;
  alarm_trigger_us = micros();
  alarm_was_moving = stepper_running();
  alarm_code = code;
}

ISR(INT0_vect) {
  // Hardware e-stop: stop the steppers here, now; the main loop does the rest.
  latch_alarm(ALARM_ESTOP_INPUT);
  stepper_halt();
}

void system_estop_byte(void) {
  latch_alarm(ALARM_ESTOP_BYTE);
  stepper_stop_decelerating();
}

void system_request_status(void) { status_requested = true; }

void system_raise_alarm(uint8_t code) {
  cli();
  latch_alarm(code);
  sei();
}

bool system_estop_input_active(void) { return PIN_READ(PIN_ESTOP) == 0; }

void system_init(void) {
  static_assert(PIN_BIT(PIN_ESTOP) == 2 && PIN_LETTER(PIN_ESTOP) == 'D',
                "PIN_ESTOP must be D2 (INT0)");
  PIN_MAKE_INPUT_PULLUP(PIN_ESTOP);
  PIN_MAKE_INPUT_PULLUP(PIN_START);
  PIN_MAKE_INPUT_PULLUP(PIN_HOME);
  PIN_MAKE_OUTPUT(PIN_LED);

  EICRA = (1 << ISC01);  // INT0 on the falling edge (press)
  EIFR = (1 << INTF0);
  EIMSK = (1 << INT0);

  settings.steps_per_rev = DEFAULT_STEPS_PER_REV;
  settings.max_speed = DEFAULT_MAX_SPEED;
  settings.accel = DEFAULT_ACCEL;
  for (uint8_t arm = 0; arm < 4; arm++) {
    settings.open_us[arm] = DEFAULT_SERVO_OPEN_US;
    settings.closed_us[arm] = DEFAULT_SERVO_CLOSED_US;
    settings.zero_offset[arm] = 0;
  }
  settings.servo_speed = DEFAULT_SERVO_SPEED;
  settings.jaw_clear_pct = DEFAULT_JAW_CLEAR_PCT;
  settings.jaw_contact_pct = DEFAULT_JAW_CONTACT_PCT;
  settings.jaw_open_gap_mm = DEFAULT_JAW_OPEN_GAP_MM;
  settings.cube_mm = DEFAULT_CUBE_MM;
  settings.invert_mask = 0;
  settings.idle_off_s = DEFAULT_IDLE_OFF_S;
  settings.home_active_level = DEFAULT_HOME_ACTIVE_LEVEL;

  if (persist.check != persist_checksum()) {
    memset(&persist, 0, sizeof persist);  // power-up: nothing to resume, no gripper held anything
  } else {
    persist.boots++;
    if (persist.running != 0) {
      // A reset hit a GRIP/TURN: the cube may be between positions; keep how far it got.
      persist.cut = persist.running;
      persist.cut_total = persist.running_total;
      uint16_t done = persist_part.done;
      bool whole = (uint16_t)~done == persist_part.done_inv && done <= persist.running_total;
      persist.cut_done = whole ? done : PART_UNKNOWN;
      persist.running = 0;
    }
  }
  persist_save();
  if (persist.cut != 0) {
    alarm_code = ALARM_RESET_DURING_MOTION;  // nothing moves until RESET
    alarm_was_moving = false;
  }
  button_level_pressed = PIN_READ(PIN_START) == 0;
}

machine_state system_state(void) {
  if (alarm_code != ALARM_NONE) return STATE_ALARM;
  return motion_depth() > 0 ? STATE_RUN : STATE_IDLE;
}

uint8_t system_alarm(void) { return alarm_code; }

uint8_t system_clear_alarm(void) {
  if (alarm_code == ALARM_NONE) return ERR_NONE;
  if (system_estop_input_active()) return ERR_ALARM_ACTIVE;  // release the button first
  if (stepper_running() || !alarm_reported) return ERR_BUSY;  // still decelerating
  cli();
  alarm_code = ALARM_NONE;
  sei();
  alarm_flushed = false;
  alarm_reported = false;
  persist.cut = 0;
  persist.cut_done = persist.cut_total = 0;
  persist_save();
  return ERR_NONE;
}

static void poll_alarm(void) {
  // The input is edge-triggered; this also catches a button held at power-up.
  if (system_estop_input_active() && (alarm_code == ALARM_NONE || alarm_code == ALARM_ESTOP_BYTE)) {
    cli();
    latch_alarm(ALARM_ESTOP_INPUT);
    stepper_halt();
    sei();
  }
  if (alarm_code == ALARM_NONE) return;
  if (!alarm_flushed) {
    motion_flush();
    alarm_flushed = true;
  }
  if (!alarm_reported && !stepper_running() && report_has_room()) {
    uint32_t stop_us = 0;
    if (alarm_was_moving) stop_us = stepper_stopped_us() - alarm_trigger_us;
    report_alarm(alarm_code, stop_us);
    alarm_reported = true;
  }
}

static void poll_button(void) {
  bool pressed = PIN_READ(PIN_START) == 0;
  uint32_t now = millis();
  if (pressed == button_level_pressed) {
    button_changed_ms = now;
  } else if (now - button_changed_ms >= BUTTON_DEBOUNCE_MS) {
    button_level_pressed = pressed;
    button_changed_ms = now;
    if (pressed) button_report_pending = true;
  }
  if (button_report_pending && report_has_room()) {
    report_button_start();
    button_report_pending = false;
  }
}

static void poll_led(void) {
  // IDLE: 1 Hz heartbeat; RUN: on; ALARM: 5 Hz blink.
  uint32_t now = millis();
  bool on;
  switch (system_state()) {
    case STATE_RUN: on = true; break;
    case STATE_ALARM: on = (now / 100) & 1; break;
    default: on = (now % 1000) < 100; break;
  }
  PIN_WRITE(PIN_LED, on);
}

void system_poll(void) {
  poll_alarm();
  if (status_requested && report_has_room()) {
    status_requested = false;
    report_status();
  }
  poll_button();
  poll_led();
}
