#include "command.h"

#include <avr/pgmspace.h>
#include <string.h>

#include "defaults.h"
#include "motion.h"
#include "protocol.h"
#include "puzzle3.h"
#include "regrip.h"
#include "report.h"
#include "grippers.h"
#include "steppers.h"
#include "system.h"

static const uint8_t MAX_TOKENS = 5;

// Split on single spaces; an empty token (double or trailing space) is an error.
static uint8_t split(char *text, char *tokens[], uint8_t *count) {
  uint8_t n = 0;
  char *p = text;
  for (;;) {
    if (*p == '\0' || *p == ' ') return ERR_BAD_FORMAT;
    if (n == MAX_TOKENS) return ERR_BAD_ARGUMENT;
    tokens[n++] = p;
    while (*p != '\0' && *p != ' ') p++;
    if (*p == '\0') break;
    *p++ = '\0';
  }
  *count = n;
  return ERR_NONE;
}

// A decimal integer, optional minus sign.  More than 9 digits is out of range.
static uint8_t parse_int(const char *s, int32_t *out) {
  bool negative = *s == '-';
  if (negative) s++;
  if (*s == '\0') return ERR_BAD_ARGUMENT;
  int32_t v = 0;
  uint8_t digits = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return ERR_BAD_ARGUMENT;
    if (++digits > 9) return ERR_OUT_OF_RANGE;
    v = v * 10 + (*s - '0');
  }
  *out = negative ? -v : v;
  return ERR_NONE;
}

static uint8_t parse_bounded(const char *s, int32_t lo, int32_t hi, int32_t *out) {
  uint8_t err = parse_int(s, out);
  if (err != ERR_NONE) return err;
  return (*out < lo || *out > hi) ? ERR_OUT_OF_RANGE : ERR_NONE;
}

static int8_t arm_index(char c) {
  switch (c) {
    case 'R': return ARM_R;
    case 'L': return ARM_L;
    case 'F': return ARM_F;
    case 'B': return ARM_B;
    default: return -1;
  }
}

static uint8_t pair_of_arm(uint8_t arm) { return motion_pair_of(arm); }

// One arm letter (the whole token).
static int8_t parse_arm(const char *token) {
  if (token[0] == '\0' || token[1] != '\0') return -1;
  return arm_index(token[0]);
}

// A set of arm letters, e.g. "RLFB": each at most once.  0 when malformed.
static uint8_t parse_arms(const char *token) {
  uint8_t mask = 0;
  for (; *token; token++) {
    int8_t arm = arm_index(*token);
    if (arm < 0 || (mask & (1 << arm))) return 0;
    mask |= (uint8_t)(1 << arm);
  }
  return mask;
}

static uint8_t queue_action(const action_t &action) {
  if (system_alarm() != ALARM_NONE) return ERR_ALARM_ACTIVE;
  if (!motion_push(action)) return ERR_QUEUE_FULL;
  if (puzzle3_on()) puzzle3_queued(action);
  return ERR_NONE;
}

static uint8_t cmd_grip(uint32_t seq, char *tokens[], uint8_t n) {
  if (n != 2) return ERR_BAD_ARGUMENT;
  action_t a;
  a.seq = seq;
  a.type = ACTION_GRIP;
  if (strcmp(tokens[1], "RL") == 0) a.pair = PAIR_RL;
  else if (strcmp(tokens[1], "FB") == 0) a.pair = PAIR_FB;
  else return ERR_BAD_ARGUMENT;
  if (puzzle3_on() && system_alarm() == ALARM_NONE) {
    uint8_t err = puzzle3_check_close(a.pair == PAIR_RL ? 0x03 : 0x0C);
    if (err != ERR_NONE) return err;
  }
  return queue_action(a);
}

// TURN <arm><angle> [<arm><angle>], and (3x3x3) TILT <arm><angle> <arm><angle>: both arms of
// one pair, opposite angles (the same way in space: the whole cube turns).
static uint8_t cmd_turn(uint32_t seq, char *tokens[], uint8_t n, bool tilt) {
  if (n < 2 || n > 3 || (tilt && n != 3)) return ERR_BAD_ARGUMENT;
  action_t a;
  a.seq = seq;
  a.type = ACTION_TURN;
  memset(a.steps, 0, sizeof a.steps);
  int16_t quarter = (int16_t)(settings.steps_per_rev / 4);
  uint8_t pair = PAIR_NONE;
  for (uint8_t t = 1; t < n; t++) {
    int8_t arm = arm_index(tokens[t][0]);
    if (arm < 0) return ERR_BAD_ARGUMENT;
    int32_t angle;
    uint8_t err = parse_int(tokens[t] + 1, &angle);
    if (err != ERR_NONE) return err;
    if (angle < -TURN_ANGLE_MAX || angle > TURN_ANGLE_MAX) return ERR_OUT_OF_RANGE;
    if (angle == 0 || angle % 90 != 0) return ERR_BAD_ARGUMENT;
    if (a.steps[arm] != 0) return ERR_BAD_ARGUMENT;  // the same arm twice
    if (pair != PAIR_NONE && pair_of_arm(arm) != pair) return ERR_NOT_HOLDING;
    pair = pair_of_arm(arm);
    a.steps[arm] = (int16_t)(angle / 90) * quarter;
  }
  if (tilt && a.steps[ARM_R] + a.steps[ARM_L] + a.steps[ARM_F] + a.steps[ARM_B] != 0) return ERR_BAD_ARGUMENT;
  if (tilt && !puzzle3_on()) return ERR_PUZZLE_MODE;
  if (system_alarm() != ALARM_NONE) return ERR_ALARM_ACTIVE;
  if (!stepper_enabled()) return ERR_MOTORS_OFF;  // the steps would be lost
  if (puzzle3_on()) {
    uint8_t err = tilt ? puzzle3_check_tilt(pair) : puzzle3_check_turn(a.steps);
    if (err != ERR_NONE) return err;
  } else if (motion_planned_pair() != pair) {
    return ERR_NOT_HOLDING;
  }
  return queue_action(a);
}

// JOG <arm> <steps>: turn one arm by any number of steps.  Allowed in the air
// (its gripper open) or when its pair holds the cube and the other pair is
// open; a turn against a closed gripper of the other pair never starts.
static uint8_t cmd_jog(uint32_t seq, char *tokens[], uint8_t n) {
  if (n != 3) return ERR_BAD_ARGUMENT;
  int8_t arm = parse_arm(tokens[1]);
  if (arm < 0) return ERR_BAD_ARGUMENT;
  int32_t steps;
  uint8_t err = parse_bounded(tokens[2], -JOG_STEPS_MAX, JOG_STEPS_MAX, &steps);
  if (err != ERR_NONE) return err;
  if (steps == 0) return ERR_BAD_ARGUMENT;
  if (system_alarm() != ALARM_NONE) return ERR_ALARM_ACTIVE;
  if (!stepper_enabled()) return ERR_MOTORS_OFF;
  // (3x3x3: only in the air; a closed arm would turn a layer off square)
  if (motion_planned_gripper(arm) != GRIPPER_OPEN && (puzzle3_on() || motion_planned_pair() != pair_of_arm(arm)))
    return ERR_ARM_BLOCKED;
  action_t a;
  a.seq = seq;
  a.type = ACTION_TURN;
  memset(a.steps, 0, sizeof a.steps);
  a.steps[arm] = (int16_t)steps;
  return queue_action(a);
}

// HOME <arm>: find the arm's zero with the homing sensor, in the air.
static uint8_t cmd_home(uint32_t seq, char *tokens[], uint8_t n) {
  if (n != 2) return ERR_BAD_ARGUMENT;
  int8_t arm = parse_arm(tokens[1]);
  if (arm < 0) return ERR_BAD_ARGUMENT;
  if (system_alarm() != ALARM_NONE) return ERR_ALARM_ACTIVE;
  if (!stepper_enabled()) return ERR_MOTORS_OFF;
  if (motion_planned_gripper(arm) != GRIPPER_OPEN) return ERR_ARM_BLOCKED;  // it turns up to 1.25 turns
  action_t a;
  a.seq = seq;
  a.type = ACTION_HOME;
  a.arm = (uint8_t)arm;
  return queue_action(a);
}

// OPEN <arms> / CLOSE <arms>: those grippers only, then wait until they are surely there.
static uint8_t cmd_grippers(uint32_t seq, char *tokens[], uint8_t n, gripper_position position) {
  if (n != 2) return ERR_BAD_ARGUMENT;
  uint8_t mask = parse_arms(tokens[1]);
  if (mask == 0) return ERR_BAD_ARGUMENT;
  action_t a;
  a.seq = seq;
  a.type = ACTION_GRIPPERS;
  a.grippers.mask = mask;
  a.grippers.position = position;
  if (puzzle3_on() && position == GRIPPER_CLOSED && system_alarm() == ALARM_NONE) {
    uint8_t err = puzzle3_check_close(mask);
    if (err != ERR_NONE) return err;
  }
  return queue_action(a);
}

static uint8_t cmd_dwell(uint32_t seq, char *tokens[], uint8_t n) {
  if (n != 2) return ERR_BAD_ARGUMENT;
  int32_t ms;
  uint8_t err = parse_bounded(tokens[1], DWELL_MS_MIN, DWELL_MS_MAX, &ms);
  if (err != ERR_NONE) return err;
  action_t a;
  a.seq = seq;
  a.type = ACTION_DWELL;
  a.ms = (uint16_t)ms;
  return queue_action(a);
}

// `X<value>` arguments in any order, each exactly once: letters[i] -> values[i].
static uint8_t parse_lettered(char *tokens[], uint8_t n, const char *letters, const int32_t lo[],
                              const int32_t hi[], int32_t values[]) {
  uint8_t count = (uint8_t)strlen(letters);
  if (n != count + 1) return ERR_BAD_ARGUMENT;
  uint8_t seen = 0;
  for (uint8_t t = 1; t < n; t++) {
    const char *at = strchr(letters, tokens[t][0]);
    if (at == NULL || tokens[t][0] == '\0') return ERR_BAD_ARGUMENT;
    uint8_t k = (uint8_t)(at - letters);
    if (seen & (1 << k)) return ERR_BAD_ARGUMENT;
    seen |= (uint8_t)(1 << k);
    uint8_t err = parse_bounded(tokens[t] + 1, lo[k], hi[k], &values[k]);
    if (err != ERR_NONE) return err;
  }
  return ERR_NONE;
}

static bool motion_busy(void) { return motion_depth() > 0 || stepper_running(); }

// Settings change how things move: never while latched, only with an empty queue.
static uint8_t settings_change_allowed(void) {
  if (system_alarm() != ALARM_NONE) return ERR_ALARM_ACTIVE;
  return motion_busy() ? ERR_BUSY : ERR_NONE;
}

// Grippers already in use take their new widths for their current position.
static void reapply_widths(void) {
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++)
    if (gripper_get(arm) != GRIPPER_LIMP) gripper_set(arm, gripper_get(arm));
}

static uint8_t cmd_motion(char *tokens[], uint8_t n) {
  static const int32_t lo[] = {STEPS_PER_REV_MIN, MAX_SPEED_MIN, ACCEL_MIN};
  static const int32_t hi[] = {STEPS_PER_REV_MAX, MAX_SPEED_MAX, ACCEL_MAX};
  int32_t v[3];
  uint8_t err = parse_lettered(tokens, n, "SVA", lo, hi, v);
  if (err != ERR_NONE) return err;
  if (v[0] % 4 != 0) return ERR_BAD_ARGUMENT;  // quarter turns must be whole steps
  if (system_alarm() != ALARM_NONE) return ERR_ALARM_ACTIVE;  // nothing changes while latched
  if (motion_busy()) return ERR_BUSY;
  if (settings.steps_per_rev != (uint16_t)v[0]) stepper_forget(0x0F);  // a step means another angle
  settings.steps_per_rev = (uint16_t)v[0];
  settings.max_speed = (uint16_t)v[1];
  settings.accel = (uint32_t)v[2];
  regrip_update();
  return ERR_NONE;
}

// SERVO O<open_us> C<closed_us> S<speed>: every gripper's widths and the servos' speed
// (tenths of a us of pulse width per ms).
static uint8_t cmd_servo(char *tokens[], uint8_t n) {
  static const int32_t lo[] = {SERVO_US_MIN, SERVO_US_MIN, SERVO_SPEED_MIN};
  static const int32_t hi[] = {SERVO_US_MAX, SERVO_US_MAX, SERVO_SPEED_MAX};
  int32_t v[3];
  uint8_t err = parse_lettered(tokens, n, "OCS", lo, hi, v);
  if (err != ERR_NONE) return err;
  // It would move grippers in use to the new widths: never while latched.
  if (system_alarm() != ALARM_NONE) return ERR_ALARM_ACTIVE;
  if (motion_busy()) return ERR_BUSY;
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
    settings.open_us[arm] = (uint16_t)v[0];
    settings.closed_us[arm] = (uint16_t)v[1];
  }
  settings.servo_speed = (uint8_t)v[2];
  regrip_update();
  reapply_widths();
  return ERR_NONE;
}

// JAWS C<clear %> T<contact %> G<open gap mm> E<cube mm>: where along their travel the jaws
// let go of and touch the cube, how far they stand off it when open, the cube's edge.  An open
// gap inside a turning layer's reach is refused (a turn would hit the open jaws).
static uint8_t cmd_jaws(char *tokens[], uint8_t n) {
  static const int32_t lo[] = {JAW_PCT_MIN, JAW_PCT_MIN, JAW_OPEN_GAP_MM_MIN, CUBE_MM_MIN};
  static const int32_t hi[] = {JAW_PCT_MAX, JAW_PCT_MAX, JAW_OPEN_GAP_MM_MAX, CUBE_MM_MAX};
  int32_t v[4];
  uint8_t err = parse_lettered(tokens, n, "CTGE", lo, hi, v);
  if (err != ERR_NONE) return err;
  if (!regrip_gap_clears((uint8_t)v[2], (uint8_t)v[3])) return ERR_JAWS_IN_REACH;
  err = settings_change_allowed();
  if (err != ERR_NONE) return err;
  settings.jaw_clear_pct = (uint8_t)v[0];
  settings.jaw_contact_pct = (uint8_t)v[1];
  settings.jaw_open_gap_mm = (uint8_t)v[2];
  settings.cube_mm = (uint8_t)v[3];
  regrip_update();
  return ERR_NONE;
}

// Settings of one arm: `ARM R I1 Z-12`, `GRIPPER R O1100 C1900`.
static uint8_t parse_arm_settings(char *tokens[], uint8_t n, const char *letters, const int32_t lo[],
                                  const int32_t hi[], int32_t values[], int8_t *arm) {
  if (n < 2) return ERR_BAD_ARGUMENT;
  *arm = parse_arm(tokens[1]);
  if (*arm < 0) return ERR_BAD_ARGUMENT;
  uint8_t err = parse_lettered(tokens + 1, (uint8_t)(n - 1), letters, lo, hi, values);
  if (err != ERR_NONE) return err;
  return settings_change_allowed();
}

static uint8_t cmd_gripper(char *tokens[], uint8_t n) {
  static const int32_t lo[] = {SERVO_US_MIN, SERVO_US_MIN};
  static const int32_t hi[] = {SERVO_US_MAX, SERVO_US_MAX};
  int32_t v[2];
  int8_t arm;
  uint8_t err = parse_arm_settings(tokens, n, "OC", lo, hi, v, &arm);
  if (err != ERR_NONE) return err;
  settings.open_us[arm] = (uint16_t)v[0];
  settings.closed_us[arm] = (uint16_t)v[1];
  regrip_update();
  reapply_widths();
  return ERR_NONE;
}

static uint8_t cmd_arm(char *tokens[], uint8_t n) {
  static const int32_t lo[] = {0, -ZERO_OFFSET_MAX};
  static const int32_t hi[] = {1, ZERO_OFFSET_MAX};
  int32_t v[2];
  int8_t arm;
  uint8_t err = parse_arm_settings(tokens, n, "IZ", lo, hi, v, &arm);
  if (err != ERR_NONE) return err;
  uint8_t bit = (uint8_t)(1 << arm);
  if (((settings.invert_mask & bit) != 0) != (v[0] != 0)) stepper_forget(bit);  // its counting flips
  settings.invert_mask = v[0] ? (settings.invert_mask | bit) : (settings.invert_mask & (uint8_t)~bit);
  settings.zero_offset[arm] = (int16_t)v[1];
  return ERR_NONE;
}

static uint8_t cmd_setup(char *tokens[], uint8_t n) {
  static const int32_t lo[] = {0, 0};
  static const int32_t hi[] = {IDLE_OFF_S_MAX, 1};
  int32_t v[2];
  uint8_t err = parse_lettered(tokens, n, "IH", lo, hi, v);
  if (err != ERR_NONE) return err;
  err = settings_change_allowed();
  if (err != ERR_NONE) return err;
  settings.idle_off_s = (uint16_t)v[0];
  settings.home_active_level = (uint8_t)v[1];
  return ERR_NONE;
}

// MOTORS ON / MOTORS OFF: the drivers' ENABLE.  Off is allowed while an alarm
// is latched (it moves nothing, it only lets go); on is not.
static uint8_t cmd_motors(char *tokens[], uint8_t n) {
  if (n != 2) return ERR_BAD_ARGUMENT;
  bool on = strcmp(tokens[1], "ON") == 0;
  if (!on && strcmp(tokens[1], "OFF") != 0) return ERR_BAD_ARGUMENT;
  if (on && system_alarm() != ALARM_NONE) return ERR_ALARM_ACTIVE;
  if (motion_busy()) return ERR_BUSY;
  if (on) motion_drivers_on();
  else stepper_enable(false);
  return ERR_NONE;
}

// ZERO <arms>: the host confirms these arms are straight (squared by eye).
static uint8_t cmd_zero(char *tokens[], uint8_t n) {
  if (n != 2) return ERR_BAD_ARGUMENT;
  uint8_t mask = parse_arms(tokens[1]);
  if (mask == 0) return ERR_BAD_ARGUMENT;
  if (system_alarm() != ALARM_NONE) return ERR_ALARM_ACTIVE;
  if (!stepper_enabled()) return ERR_MOTORS_OFF;  // nothing would hold them there
  if (motion_busy()) return ERR_BUSY;
  stepper_set_zero(mask);
  return ERR_NONE;
}

// PUZZLE 2 / PUZZLE 3: the 2x2x2 robot's rules (the default after power-up and every reset) or
// the 3x3x3's (docs/robot3.md).  It changes what may move: never while latched or busy.
static uint8_t cmd_puzzle(char *tokens[], uint8_t n) {
  if (n != 2 || (tokens[1][0] != '2' && tokens[1][0] != '3') || tokens[1][1] != '\0') return ERR_BAD_ARGUMENT;
  uint8_t err = settings_change_allowed();
  if (err != ERR_NONE) return err;
  puzzle3_set(tokens[1][0] == '3');
  return ERR_NONE;
}

// TIME <seq>: the measured duration of a completed action (for a host that lost its `done`
// line); read-only, so allowed while an alarm is latched.
static uint8_t cmd_time(char *tokens[], uint8_t n) {
  if (n != 2) return ERR_BAD_ARGUMENT;
  int32_t seq;
  uint8_t err = parse_bounded(tokens[1], 1, TIME_SEQ_MAX, &seq);
  if (err != ERR_NONE) return err;
  report_time((uint32_t)seq);
  return ERR_NONE;
}

uint8_t command_execute(uint32_t seq, char *text) {
  char *tokens[MAX_TOKENS];
  uint8_t n = 0;
  uint8_t err = split(text, tokens, &n);
  if (err != ERR_NONE) return err;
  const char *name = tokens[0];  // the names stay in flash (PSTR): as RAM strings they took 120 bytes
  if (strcmp_P(name, PSTR("GRIP")) == 0) return cmd_grip(seq, tokens, n);
  if (strcmp_P(name, PSTR("TURN")) == 0) return cmd_turn(seq, tokens, n, false);
  if (strcmp_P(name, PSTR("TILT")) == 0) return cmd_turn(seq, tokens, n, true);
  if (strcmp_P(name, PSTR("DWELL")) == 0) return cmd_dwell(seq, tokens, n);
  if (strcmp_P(name, PSTR("MOTION")) == 0) return cmd_motion(tokens, n);
  if (strcmp_P(name, PSTR("SERVO")) == 0) return cmd_servo(tokens, n);
  if (strcmp_P(name, PSTR("JAWS")) == 0) return cmd_jaws(tokens, n);
  if (strcmp_P(name, PSTR("JOG")) == 0) return cmd_jog(seq, tokens, n);
  if (strcmp_P(name, PSTR("OPEN")) == 0) return cmd_grippers(seq, tokens, n, GRIPPER_OPEN);
  if (strcmp_P(name, PSTR("CLOSE")) == 0) return cmd_grippers(seq, tokens, n, GRIPPER_CLOSED);
  if (strcmp_P(name, PSTR("HOME")) == 0) return cmd_home(seq, tokens, n);
  if (strcmp_P(name, PSTR("MOTORS")) == 0) return cmd_motors(tokens, n);
  if (strcmp_P(name, PSTR("ZERO")) == 0) return cmd_zero(tokens, n);
  if (strcmp_P(name, PSTR("ARM")) == 0) return cmd_arm(tokens, n);
  if (strcmp_P(name, PSTR("GRIPPER")) == 0) return cmd_gripper(tokens, n);
  if (strcmp_P(name, PSTR("SETUP")) == 0) return cmd_setup(tokens, n);
  if (strcmp_P(name, PSTR("TIME")) == 0) return cmd_time(tokens, n);
  if (strcmp_P(name, PSTR("PUZZLE")) == 0) return cmd_puzzle(tokens, n);
  if (strcmp_P(name, PSTR("HELLO")) == 0 || strcmp_P(name, PSTR("STATUS")) == 0 || strcmp_P(name, PSTR("RESET")) == 0 ||
      strcmp_P(name, PSTR("WHERE")) == 0) {
    if (n != 1) return ERR_BAD_ARGUMENT;
    if (name[0] == 'H') report_identity();
    else if (name[0] == 'S') report_status();
    else if (name[0] == 'W') report_where();
    else return system_clear_alarm();
    return ERR_NONE;
  }
  return ERR_UNKNOWN_COMMAND;
}
