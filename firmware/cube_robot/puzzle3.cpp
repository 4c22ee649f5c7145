#include "puzzle3.h"

#include "protocol.h"
#include "system.h"

// Each arm after the queued actions, 2 bits an arm (one byte: the stack floor is tight):
// its gripper's angle mod 180 (0 or 90), off square (a JOG), or not known.
enum { AT_0, AT_90, OFF_SQUARE, UNKNOWN };
static bool mode3;
static uint8_t arm_states;

bool puzzle3_on(void) { return mode3; }

void puzzle3_set(bool three) { mode3 = three; }

static uint8_t state_of(uint8_t arm) { return (uint8_t)((arm_states >> (2 * arm)) & 3); }

static void set_state(uint8_t arm, uint8_t state) {
  arm_states = (uint8_t)((arm_states & ~(3 << (2 * arm))) | (state << (2 * arm)));
}

// With nothing queued the arms are where the step counter says (ZERO, MOTORS OFF, ARM, MOTION
// and an alarm's flush all happen with an empty queue); while an arm still stops, not known.
static void sync(void) {
  int16_t quarter = (int16_t)(settings.steps_per_rev / 4);
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
    int16_t p = stepper_position(arm);
    uint8_t s = UNKNOWN;
    if (!stepper_running() && (stepper_known_mask() & (1 << arm)))
      s = p % quarter != 0 ? (uint8_t)OFF_SQUARE : (uint8_t)((p / quarter) & 1);
    set_state(arm, s);
  }
}

static void sync_if_idle(void) {
  if (motion_depth() == 0) sync();
}

static uint8_t other_arms(uint8_t arm) { return motion_pair_of(arm) == PAIR_RL ? 0x0C : 0x03; }

uint8_t puzzle3_check_turn(const int16_t steps[ARM_COUNT]) {
  sync_if_idle();
  uint8_t others = 0;
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
    if (steps[arm] == 0) continue;
    uint8_t s = state_of(arm);
    if (s == UNKNOWN) return ERR_POSITION_UNKNOWN;
    if (motion_planned_gripper(arm) == GRIPPER_OPEN) continue;  // turns in the air (a restore)
    if (s == OFF_SQUARE) return ERR_NOT_SQUARE;
    others = other_arms(arm);  // it turns its layer: the other pair holds the cube, at 0
  }
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++)
    if ((others & (1 << arm)) && motion_planned_gripper(arm) != GRIPPER_CLOSED) return ERR_OTHER_PAIR_OPEN;
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
    if (!(others & (1 << arm))) continue;
    if (state_of(arm) == UNKNOWN) return ERR_POSITION_UNKNOWN;
    if (state_of(arm) != AT_0) return ERR_GRIPPER_ACROSS;
  }
  return ERR_NONE;
}

uint8_t puzzle3_check_tilt(uint8_t pair) {
  sync_if_idle();
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
    bool tilting = motion_pair_of(arm) == pair;
    if (tilting && state_of(arm) == UNKNOWN) return ERR_POSITION_UNKNOWN;
    if (tilting && state_of(arm) == OFF_SQUARE) return ERR_NOT_SQUARE;
    if (tilting && motion_planned_gripper(arm) != GRIPPER_CLOSED) return ERR_NOT_HOLDING;
    if (!tilting && motion_planned_gripper(arm) != GRIPPER_OPEN) return ERR_OTHER_PAIR_CLOSED;
  }
  return ERR_NONE;
}

uint8_t puzzle3_check_close(uint8_t arm_mask) {
  sync_if_idle();
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
    if (!(arm_mask & (1 << arm))) continue;
    if (state_of(arm) == UNKNOWN) return ERR_POSITION_UNKNOWN;
    if (state_of(arm) == OFF_SQUARE) return ERR_NOT_SQUARE;  // its jaws would close on a turned layer
  }
  return ERR_NONE;
}

void puzzle3_queued(const action_t &action) {
  if (motion_depth() == 1) sync();  // the queue was empty: this one has not started yet
  if (action.type == ACTION_HOME) {
    set_state(action.arm, AT_0);  // a failed homing latches an alarm: the queue is flushed, then synced
    return;
  }
  if (action.type != ACTION_TURN) return;
  int16_t quarter = (int16_t)(settings.steps_per_rev / 4);
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
    int16_t n = action.steps[arm];
    uint8_t s = state_of(arm);
    if (n == 0 || s >= OFF_SQUARE) continue;
    set_state(arm, n % quarter != 0 ? (uint8_t)OFF_SQUARE : (uint8_t)(s ^ ((n / quarter) & 1)));
  }
}
