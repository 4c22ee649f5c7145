#include "motion.h"

#include <Arduino.h>

#include "defaults.h"
#include "protocol.h"
#include "report.h"
#include "grippers.h"
#include "system.h"

static action_t queue[QUEUE_DEPTH];
static uint8_t head;   // next free slot (pushes)
static uint8_t tail;   // oldest action (runs)
static uint8_t count;
static bool active;    // queue[tail] has started
static uint8_t grip_phase;  // GRIP: 0 closing the pair, 1 opening the other
static uint32_t started_ms;
static uint32_t phase_ms;
static uint8_t planned_pair;

static const uint8_t PAIR_ARMS[3][2] = {{0, 0}, {ARM_R, ARM_L}, {ARM_F, ARM_B}};

static uint8_t actual_holding_pair(void) {
  // A pair holds when both its grippers are closed and the other pair's open.
  for (uint8_t pair = PAIR_RL; pair <= PAIR_FB; pair++) {
    uint8_t other = pair == PAIR_RL ? PAIR_FB : PAIR_RL;
    if (servo_get(PAIR_ARMS[pair][0]) == SERVO_CLOSED && servo_get(PAIR_ARMS[pair][1]) == SERVO_CLOSED &&
        servo_get(PAIR_ARMS[other][0]) == SERVO_OPEN && servo_get(PAIR_ARMS[other][1]) == SERVO_OPEN)
      return pair;
  }
  return PAIR_NONE;
}

void motion_init(void) {
  head = tail = count = 0;
  active = false;
  planned_pair = PAIR_NONE;
}

uint8_t motion_depth(void) { return count; }

bool motion_push(const action_t &action) {
  if (count >= QUEUE_DEPTH) return false;
  queue[head] = action;
  head = (uint8_t)((head + 1) % QUEUE_DEPTH);
  count++;
  if (action.type == ACTION_GRIP) planned_pair = action.pair;
  return true;
}

void motion_flush(void) {
  head = tail = count = 0;
  active = false;
  persist.running = 0;
  persist_save();
  planned_pair = actual_holding_pair();
}

uint32_t motion_running_seq(void) { return active ? queue[tail].seq : 0; }

uint8_t motion_planned_pair(void) { return planned_pair; }

static void start(action_t &a) {
  started_ms = phase_ms = millis();
  if (a.type != ACTION_DWELL) {  // a reset during these leaves the cube between positions
    persist.running = a.seq;
    persist_save();
  }
  if (a.type == ACTION_TURN) {
    stepper_start(a.steps);
  } else if (a.type == ACTION_GRIP) {
    grip_phase = 0;
    servo_set(PAIR_ARMS[a.pair][0], SERVO_CLOSED);
    servo_set(PAIR_ARMS[a.pair][1], SERVO_CLOSED);
  }
}

// True when the running action has finished.
static bool step(action_t &a) {
  uint32_t now = millis();
  switch (a.type) {
    case ACTION_TURN:
      return !stepper_running();
    case ACTION_DWELL:
      return now - started_ms >= a.ms;
    default:  // GRIP
      if (now - phase_ms < settings.grip_ms) return false;
      if (grip_phase == 1) return true;
      grip_phase = 1;
      phase_ms = now;
      {
        uint8_t other = a.pair == PAIR_RL ? PAIR_FB : PAIR_RL;
        servo_set(PAIR_ARMS[other][0], SERVO_OPEN);
        servo_set(PAIR_ARMS[other][1], SERVO_OPEN);
      }
      return false;
  }
}

void motion_poll(void) {
  if (count == 0 || system_alarm() != ALARM_NONE) return;
  action_t &a = queue[tail];
  if (!active) {
    active = true;
    start(a);
    return;
  }
  if (!step(a)) return;
  // An e-stop that halted the steppers after the check above is not a `done`.
  if (system_alarm() != ALARM_NONE) return;
  if (!report_has_room()) return;  // `done` must go out before the next action
  uint32_t ms = millis() - started_ms;
  persist.last = a.seq;
  persist.running = 0;
  persist_save();
  report_done(a.seq, ms);
  active = false;
  tail = (uint8_t)((tail + 1) % QUEUE_DEPTH);
  count--;
}
