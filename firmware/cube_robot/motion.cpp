#include "motion.h"

#include <Arduino.h>

#include "defaults.h"
#include "protocol.h"
#include "report.h"
#include "grippers.h"
#include "homing.h"
#include "regrip.h"
#include "system.h"

static action_t queue[QUEUE_DEPTH];
static uint8_t head;   // next free slot (pushes)
static uint8_t tail;   // oldest action (runs)
static uint8_t count;
static bool active;    // queue[tail] has started
static uint8_t grip_phase;  // GRIP: 0 closing the pair, 1 opening the other
static uint32_t phase_us;   // GRIP: when this phase's grippers were told to move
static uint32_t phase_wait_us;  // GRIP / OPEN / CLOSE: how long they take (0: nothing moved)
static uint32_t started_ms;
static uint32_t started_us;
// The regrip's overlap (robot/regrip.py): during a TURN, the next GRIP's pair is
// told to close `lead` before the turn ends, if that GRIP was queued by then.
static uint8_t early_mask;      // grippers told to close during the running turn (when: phase_us)
static bool early_missed;       // the GRIP behind the running turn came too late to overlap
static uint8_t planned[ARM_COUNT];  // gripper_position of each gripper after the queued actions
static uint32_t idle_since_ms;       // the last action ended (or the drivers went on)

static const uint8_t PAIR_ARMS[3][2] = {{0, 0}, {ARM_R, ARM_L}, {ARM_F, ARM_B}};

static bool early_close_at(const action_t &turn, const action_t &grip, uint32_t *at_us);

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
    uint32_t at;  // behind the running turn, too late for its closing to overlap: it will not
    if (active && count == 2 && early_close_at(queue[tail], action, &at) && micros() - started_us > at)
      early_missed = true;
    for (uint8_t arm = 0; arm < ARM_COUNT; arm++)
      planned[arm] = motion_pair_of(arm) == action.pair ? GRIPPER_CLOSED : GRIPPER_OPEN;
  } else if (action.type == ACTION_GRIPPERS) {
    for (uint8_t arm = 0; arm < ARM_COUNT; arm++)
      if (action.grippers.mask & (1 << arm)) planned[arm] = action.grippers.position;
  }
  return true;
}

void motion_flush(void) {
  // A closing started during a turn that an alarm stopped: the layer may stand anywhere, so those
  // jaws stop driving where they are (nothing moves while an alarm is latched).
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++)
    if (early_mask & (1 << arm)) gripper_limp(arm);
  early_mask = 0;
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

static uint8_t other_pair(uint8_t pair) { return pair == PAIR_RL ? PAIR_FB : PAIR_RL; }

static uint8_t pair_mask(uint8_t pair) {
  return (uint8_t)((1 << PAIR_ARMS[pair][0]) | (1 << PAIR_ARMS[pair][1]));
}

// The longest of the pair's grippers from a command to surely there.
static uint32_t pair_closing_us(uint8_t pair) {
  uint16_t a = regrip_closing_ms(PAIR_ARMS[pair][0]), b = regrip_closing_ms(PAIR_ARMS[pair][1]);
  return (a > b ? a : b) * 1000UL;
}
static uint32_t pair_opening_us(uint8_t pair) {
  uint16_t a = regrip_opening_ms(PAIR_ARMS[pair][0]), b = regrip_opening_ms(PAIR_ARMS[pair][1]);
  return (a > b ? a : b) * 1000UL;
}

static uint8_t next_slot(void) { return (uint8_t)((tail + 1) % QUEUE_DEPTH); }

// When (us after the running turn started) the GRIP `grip` behind turn `turn` tells its pair to
// close; false when it does not overlap (another move, or its pair is already closed).  Its jaws
// must be fully open by then (they may still be opening from the regrip before this turn: every
// frame begun since the open command sent the open width: regrip_open_frames).
static bool early_close_at(const action_t &turn, const action_t &grip, uint32_t *at_us) {
  if (turn.type != ACTION_TURN || grip.type != ACTION_GRIP) return false;
  uint8_t kind = regrip_turn_kind(turn.steps, pair_mask(other_pair(grip.pair)));
  if (kind == TURN_OTHER) return false;
  uint16_t lead = 0xFFFF;
  bool closing = false;
  uint32_t at = 0;
  for (uint8_t i = 0; i < 2; i++) {
    uint8_t arm = PAIR_ARMS[grip.pair][i];
    uint16_t l = regrip_close_lead_ms(kind, arm);
    if (l < lead) lead = l;
    if (gripper_get(arm) == GRIPPER_CLOSED) continue;
    closing = true;
    uint32_t need = regrip_open_frames(arm) * (uint32_t)SERVO_FRAME_US, before = started_us - gripper_opened_us(arm);
    if (before < need && need - before > at) at = need - before;
  }
  if (!closing) return false;
  uint32_t due = regrip_turn_us(kind) - lead * 1000UL;
  *at_us = at > due ? at : due;
  return true;
}

// The running TURN: start the next GRIP's closing at its moment, if that GRIP was queued by then.
static void poll_early_close(const action_t &turn) {
  if (early_mask != 0 || early_missed || count < 2) return;
  const action_t &grip = queue[next_slot()];
  uint32_t at;
  if (!early_close_at(turn, grip, &at)) {
    early_missed = grip.type == ACTION_GRIP;  // decided for this turn
    return;
  }
  uint32_t now = micros();
  if (now - started_us < at) return;
  for (uint8_t i = 0; i < 2; i++) {
    uint8_t arm = PAIR_ARMS[grip.pair][i];
    if (gripper_get(arm) == GRIPPER_CLOSED) continue;
    gripper_set_unkept(arm, GRIPPER_CLOSED);  // kept for a reset once the turn has ended
    early_mask |= (uint8_t)(1 << arm);
  }
  phase_us = now;  // the GRIP behind the turn counts its closing from here
}

// The releasing pair was told to open now: how long until the next action may start.  A TURN
// already queued behind the GRIP by the holding pair starts once the opening jaws are outside its
// reach; else (nothing queued yet, another move) once they are surely fully open.
static uint32_t opening_wait_us(const action_t &grip) {
  uint8_t releasing = other_pair(grip.pair);
  if (count >= 2) {
    const action_t &next = queue[next_slot()];
    uint8_t kind = next.type == ACTION_TURN ? regrip_turn_kind(next.steps, pair_mask(grip.pair)) : (uint8_t)TURN_OTHER;
    if (kind != TURN_OTHER) {
      uint16_t a = regrip_opening_wait_ms(kind, PAIR_ARMS[releasing][0]);
      uint16_t b = regrip_opening_wait_ms(kind, PAIR_ARMS[releasing][1]);
      return (a > b ? a : b) * 1000UL;
    }
  }
  return pair_opening_us(releasing);
}

static void start(action_t &a) {
  started_ms = millis();
  started_us = micros();
  if (a.type != ACTION_GRIP || early_mask == 0) phase_us = started_us;  // else: its closing began in the turn
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
    early_mask = 0;
    early_missed = false;
    stepper_start(a.steps);
    started_us = micros();  // the turn's moments count from its timer's start (a closing never early)
  } else if (a.type == ACTION_HOME) {
    homing_start(a.arm);
  } else if (a.type == ACTION_GRIPPERS) {
    phase_wait_us = 0;
    for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
      if (!(a.grippers.mask & (1 << arm))) continue;
      gripper_set(arm, (gripper_position)a.grippers.position);
      uint32_t us = (a.grippers.position == GRIPPER_OPEN ? regrip_opening_ms(arm) : regrip_closing_ms(arm)) * 1000UL;
      if (us > phase_wait_us) phase_wait_us = us;
    }
  } else if (a.type == ACTION_GRIP) {
    grip_phase = 0;
    if (early_mask != 0) {  // its pair began closing during the turn, which has ended now
      for (uint8_t arm = 0; arm < ARM_COUNT; arm++)
        if (early_mask & (1 << arm)) gripper_keep(arm);
      early_mask = 0;  // phase_us: when they were told (poll_early_close)
      set_pair(a.pair, GRIPPER_CLOSED);  // (nothing left: the whole pair was told)
      phase_wait_us = pair_closing_us(a.pair);
    } else {
      phase_wait_us = set_pair(a.pair, GRIPPER_CLOSED) ? pair_closing_us(a.pair) : 0;
    }
  }
}

// True when the running action has finished.
static bool step(action_t &a) {
  uint32_t now = millis();
  switch (a.type) {
    case ACTION_TURN:
      if (!stepper_running()) return true;
      poll_early_close(a);
      return false;
    case ACTION_DWELL:
      return now - started_ms >= a.ms;
    case ACTION_GRIPPERS:
      return micros() - phase_us >= phase_wait_us;
    case ACTION_HOME:
      return !stepper_running() && homing_step(a.arm);
    default:  // GRIP: a half whose grippers already were there is skipped (a pair that holds: 0 ms)
      if (micros() - phase_us < phase_wait_us) return false;
      if (grip_phase == 1) return true;
      grip_phase = 1;
      persist_set_part(1);  // the pair holds; the other pair opens
      phase_us = micros();
      phase_wait_us = set_pair(other_pair(a.pair), GRIPPER_OPEN) ? opening_wait_us(a) : 0;
      return phase_wait_us == 0;
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
