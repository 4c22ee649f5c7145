// Machine state (IDLE / RUN / ALARM), alarms, settings, the inputs (e-stop,
// start button), the status LED, and the counters kept across a reset.
#ifndef SYSTEM_H
#define SYSTEM_H

#include <stdint.h>

#include "defaults.h"  // TIME_SLOTS
#include "io.h"
#include "pins.h"

enum machine_state { STATE_IDLE, STATE_RUN, STATE_ALARM };

struct settings_t {
  uint16_t steps_per_rev;
  uint16_t max_speed;  // steps/s
  uint32_t accel;      // steps/s^2
  uint16_t open_us[4];    // per gripper (ARM_* order): SERVO sets all four, GRIPPER one
  uint16_t closed_us[4];
  uint8_t servo_speed;      // tenths of a us of pulse width per ms
  uint8_t jaw_clear_pct;    // % of the opening travel where the jaws stop touching the cube
  uint8_t jaw_contact_pct;  // % of the closing travel where they first touch it
  uint8_t jaw_open_gap_mm;  // jaw to cube when fully open
  uint8_t cube_mm;          // the cube's edge
  uint8_t invert_mask;    // arms whose DIR level is inverted (bit ARM_*)
  int16_t zero_offset[4]; // steps from the homing sensor's edge to the arm's zero
  uint16_t idle_off_s;    // drivers off after this long without an action (0: never)
  uint8_t home_active_level;  // level of the homing input at a sensor
};
extern settings_t settings;

// Kept in .noinit RAM: survives a reset (not a power cycle) while `check` matches.
// A reset (DTR, the reset button, a brown-out, the watchdog) keeps an AVR's SRAM;
// only a power cycle loses it.
#define PART_UNKNOWN 0xFFFF // cut_done when the reset tore the step counter's write
struct persist_t {
  uint32_t last;     // last completed action
  uint32_t cut;      // action a reset interrupted (0: none); cleared by RESET
  uint32_t running;  // GRIP/TURN in progress (becomes `cut` if a reset hits it)
  uint16_t running_total;  // its parts: a move's steps (longest arm), a GRIP's 2 phases
  uint16_t cut_done;       // parts of the cut action done (PART_UNKNOWN: not known)
  uint16_t cut_total;
  uint16_t boots;          // resets since power-up (a host that missed the banner sees it)
  uint16_t closed_us;   // pulse width of the closed grippers, and which arms were
  uint8_t closed_mask;  // closed: a reset keeps them closed (grippers.cpp gripper_init)
  uint8_t time_next;    // next slot of the duration ring
  uint32_t time_seq[TIME_SLOTS];  // completed actions' seqs and their measured ms,
  uint16_t time_ms[TIME_SLOTS];   // so a host that lost a `done` line asks `TIME <seq>`
  uint32_t check;
};
extern persist_t persist;
// Parts of the running action done, written at every step by the step ISR: too often for the
// check word, so it carries its own complement (a write torn by a reset reads as unknown).
struct persist_part_t {
  uint16_t done;
  uint16_t done_inv;
};
extern volatile persist_part_t persist_part;
void persist_set_part(uint16_t done);  // ISR or interrupts off: both halves
void persist_record_time(uint32_t seq, uint16_t ms);  // a completed action's duration (then persist_save)
bool persist_find_time(uint32_t seq, uint16_t *ms);
void persist_save(void);  // after changing a field: recompute the check word

void system_init(void);  // pins, INT0, settings, persist; latches a cut alarm
void system_poll(void);  // main loop: alarm handling, reports, buttons, LED

machine_state system_state(void);
uint8_t system_alarm(void);          // ALARM_* code, ALARM_NONE when clear
uint8_t system_clear_alarm(void);    // the RESET command: ERR_* code
bool system_estop_input_active(void);
void system_raise_alarm(uint8_t code);  // main loop: latch an alarm (homing failures)
// The shared homing input, after the polarity setting.  Inline: the step ISR
// reads it on every homing step and stays free of calls.
static inline __attribute__((always_inline)) bool system_home_sensor_active(void) { return PIN_READ(PIN_HOME) == settings.home_active_level; }

// Called from ISRs.
void system_estop_byte(void);        // RX ISR: `!`
void system_request_status(void);    // RX ISR: `?`

#endif
