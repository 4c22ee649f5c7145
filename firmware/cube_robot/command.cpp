#include "command.h"

#include <string.h>

#include "defaults.h"
#include "motion.h"
#include "protocol.h"
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

static uint8_t pair_of_arm(uint8_t arm) { return arm <= ARM_L ? PAIR_RL : PAIR_FB; }

static uint8_t queue_action(const action_t &action) {
  if (system_alarm() != ALARM_NONE) return ERR_ALARM_ACTIVE;
  if (!motion_push(action)) return ERR_QUEUE_FULL;
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
  return queue_action(a);
}

static uint8_t cmd_turn(uint32_t seq, char *tokens[], uint8_t n) {
  if (n < 2 || n > 3) return ERR_BAD_ARGUMENT;
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
  if (system_alarm() != ALARM_NONE) return ERR_ALARM_ACTIVE;
  if (motion_planned_pair() != pair) return ERR_NOT_HOLDING;
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

static uint8_t cmd_motion(char *tokens[], uint8_t n) {
  static const int32_t lo[] = {STEPS_PER_REV_MIN, MAX_SPEED_MIN, ACCEL_MIN};
  static const int32_t hi[] = {STEPS_PER_REV_MAX, MAX_SPEED_MAX, ACCEL_MAX};
  int32_t v[3];
  uint8_t err = parse_lettered(tokens, n, "SVA", lo, hi, v);
  if (err != ERR_NONE) return err;
  if (v[0] % 4 != 0) return ERR_BAD_ARGUMENT;  // quarter turns must be whole steps
  if (system_alarm() != ALARM_NONE) return ERR_ALARM_ACTIVE;  // nothing changes while latched
  if (motion_busy()) return ERR_BUSY;
  settings.steps_per_rev = (uint16_t)v[0];
  settings.max_speed = (uint16_t)v[1];
  settings.accel = (uint32_t)v[2];
  return ERR_NONE;
}

static uint8_t cmd_servo(char *tokens[], uint8_t n) {
  static const int32_t lo[] = {SERVO_US_MIN, SERVO_US_MIN, GRIP_MS_MIN};
  static const int32_t hi[] = {SERVO_US_MAX, SERVO_US_MAX, GRIP_MS_MAX};
  int32_t v[3];
  uint8_t err = parse_lettered(tokens, n, "OCG", lo, hi, v);
  if (err != ERR_NONE) return err;
  // It would move grippers in use to the new widths: never while latched.
  if (system_alarm() != ALARM_NONE) return ERR_ALARM_ACTIVE;
  if (motion_busy()) return ERR_BUSY;
  settings.servo_open_us = (uint16_t)v[0];
  settings.servo_closed_us = (uint16_t)v[1];
  settings.grip_ms = (uint16_t)v[2];
  // Grippers already in use take the new widths for their current position.
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++)
    if (servo_get(arm) != SERVO_LIMP) servo_set(arm, servo_get(arm));
  return ERR_NONE;
}

uint8_t command_execute(uint32_t seq, char *text) {
  char *tokens[MAX_TOKENS];
  uint8_t n = 0;
  uint8_t err = split(text, tokens, &n);
  if (err != ERR_NONE) return err;
  const char *name = tokens[0];
  if (strcmp(name, "GRIP") == 0) return cmd_grip(seq, tokens, n);
  if (strcmp(name, "TURN") == 0) return cmd_turn(seq, tokens, n);
  if (strcmp(name, "DWELL") == 0) return cmd_dwell(seq, tokens, n);
  if (strcmp(name, "MOTION") == 0) return cmd_motion(tokens, n);
  if (strcmp(name, "SERVO") == 0) return cmd_servo(tokens, n);
  if (strcmp(name, "HELLO") == 0 || strcmp(name, "STATUS") == 0 || strcmp(name, "RESET") == 0) {
    if (n != 1) return ERR_BAD_ARGUMENT;
    if (name[0] == 'H') report_identity();
    else if (name[0] == 'S') report_status();
    else return system_clear_alarm();
    return ERR_NONE;
  }
  return ERR_UNKNOWN_COMMAND;
}
