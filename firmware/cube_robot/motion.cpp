#include "motion.h"

#include <Arduino.h>

#include "defaults.h"
#include "protocol.h"
#include "report.h"
#include "grippers.h"
#include "homing.h"
#include "system.h"

static action_t queue[QUEUE_DEPTH];
static uint8_t head;   // next free slot (pushes)
static uint8_t tail;   // oldest action (runs)
static uint8_t count;
static bool active;    // queue[tail] has started
static uint8_t grip_phase;  // GRIP: 0 closing the pair, 1 opening the other
static bool grip_settling;  // GRIP: this phase moved a gripper, so it waits grip_ms
static uint32_t started_ms;
static uint32_t phase_ms;
static uint8_t planned[ARM_COUNT];  // gripper_position of each gripper after the queued actions
static uint32_t idle_since_ms;       // the last action ended (or the drivers went on)

static const uint8_t PAIR_ARMS[3][2] = {{0, 0}, {ARM_R, ARM_L}, {ARM_F, ARM_B}};

uint8_t motion_pair_of(uint8_t arm) { return arm <= ARM_L ? PAIR_RL : PAIR_FB; }

gripper_position motion_planned_gripper(uint8_t arm) { return (gripper_position)planned[arm]; }

uint8_t motion_planned_pair(void) {
  // A pair holds when both its grippers are closed and the other pair's open.
  for (uint8_t pair = PAIR_RL; pair <= PAIR_FB; pair++) {
    uint8_t other = pair == PAIR_RL ? PAIR_FB : PAIR_RL;
    if (planned[PAIR_ARMS[pair][0]] == GRIPPER_CLOSED && planned[PAIR_ARMS[pair][1]] == GRIPPER_CLOSED &&
        planned[PAIR_ARMS[other][0]] == GRIPPER_OPEN && planned[PAIR_ARMS[other][1]] == GRIPPER_OPEN)
      return pair;
  }
  return PAIR_NONE;
}

void motion_init(void) {
  head = tail = count = 0;
  active = false;
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) planned[arm] = GRIPPER_LIMP;
  idle_since_ms = millis();
}

uint8_t motion_depth(void) { return count; }

bool motion_push(const action_t &action) {
  if (count >= QUEUE_DEPTH) return false;
  queue[head] = action;
  head = (uint8_t)((head + 1) % QUEUE_DEPTH);
  count++;
  if (action.type == ACTION_GRIP) {
    for (uint8_t arm = 0; arm < ARM_COUNT; arm++)
      planned[arm] = motion_pair_of(arm) == action.pair ? GRIPPER_CLOSED : GRIPPER_OPEN;
  } else if (action.type == ACTION_GRIPPERS) {
    for (uint8_t arm = 0; arm < ARM_COUNT; arm++)
      if (action.grippers.mask & (1 << arm)) planned[arm] = action.grippers.position;
  }
  return true;
}

void motion_flush(void) {
  head = tail = count = 0;
  active = false;
  persist.running = 0;
  persist_save();
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) planned[arm] = gripper_get(arm);
}

uint32_t motion_running_seq(void) { return active ? queue[tail].seq : 0; }

// Command the pair's two grippers to `position`; false when both already were
// there (then nothing moves and that half of a GRIP costs no time).
static bool set_pair(uint8_t pair, gripper_position position) {
  bool moved = false;
  for (uint8_t i = 0; i < 2; i++) {
    uint8_t arm = PAIR_ARMS[pair][i];
    if (gripper_get(arm) == position) continue;
    gripper_set(arm, position);
    moved = true;
  }
  return moved;
}

static void start(action_t &a) {
  started_ms = phase_ms = millis();
  if (a.type != ACTION_DWELL) {  // a reset during these leaves the cube between positions
    // How far it gets is kept too: a move's steps (the ISR counts them), a GRIP's phases.
    uint16_t total = a.type == ACTION_GRIP ? 2 : 1;
    if (a.type == ACTION_TURN) {
      total = 0;
      for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
        uint16_t n = (uint16_t)(a.steps[arm] < 0 ? -a.steps[arm] : a.steps[arm]);
        if (n > total) total = n;
      }
    } else if (a.type == ACTION_HOME) {
      total = 0;  // phases of unknown length: its steps are not a measure of progress
    }
    persist_set_part(0);
    persist.running_total = total;
    persist.running = a.seq;
    persist_save();
  }
  if (a.type == ACTION_TURN) {
    stepper_start(a.steps);
  } else if (a.type == ACTION_HOME) {
    homing_start(a.arm);
  } else if (a.type == ACTION_GRIPPERS) {
    for (uint8_t arm = 0; arm < ARM_COUNT; arm++)
      if (a.grippers.mask & (1 << arm)) gripper_set(arm, (gripper_position)a.grippers.position);
  } else if (a.type == ACTION_GRIP) {
    grip_phase = 0;
    grip_settling = set_pair(a.pair, GRIPPER_CLOSED);
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
    case ACTION_GRIPPERS:
      return now - started_ms >= settings.grip_ms;
    case ACTION_HOME:
      return !stepper_running() && homing_step(a.arm);
    default:  // GRIP: a half whose grippers already were there is skipped (a pair that holds: 0 ms)
      if (grip_settling && now - phase_ms < settings.grip_ms) return false;
      if (grip_phase == 1) return true;
      grip_phase = 1;
      persist_set_part(1);  // the pair holds; the other pair opens
      phase_ms = now;
      grip_settling = set_pair(a.pair == PAIR_RL ? PAIR_FB : PAIR_RL, GRIPPER_OPEN);
      return !grip_settling;
  }
}

// Drivers off after idle_off_s without an action (they heat while holding).
static void poll_idle(void) {
  uint32_t now = millis();
  if (count > 0 || stepper_running() || !stepper_enabled()) {
    idle_since_ms = now;
    return;
  }
  if (settings.idle_off_s != 0 && now - idle_since_ms >= (uint32_t)settings.idle_off_s * 1000UL)
    stepper_enable(false);
}

void motion_drivers_on(void) {
  stepper_enable(true);
  idle_since_ms = millis();
}

void motion_poll(void) {
  poll_idle();
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
  persist_record_time(a.seq, ms > 0xFFFF ? 0xFFFF : (uint16_t)ms);
  persist_save();
  report_done(a.seq, ms);
  active = false;
  tail = (uint8_t)((tail + 1) % QUEUE_DEPTH);
  count--;
}
