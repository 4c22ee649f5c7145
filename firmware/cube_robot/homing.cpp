#include "homing.h"

#include "defaults.h"
#include "protocol.h"
#include "steppers.h"
#include "system.h"

enum home_phase { HOME_SEEK, HOME_RELEASE, HOME_BACKOFF, HOME_APPROACH, HOME_OFFSET, HOME_DONE };
static uint8_t home_phase;  // enum home_phase

static uint16_t clamp_speed(uint32_t speed) {
  if (speed < HOME_SPEED_MIN) return HOME_SPEED_MIN;
  return speed > settings.max_speed ? settings.max_speed : (uint16_t)speed;
}

static void home_move(uint8_t arm, int16_t steps, uint16_t speed, uint8_t watch) {
  int16_t move[ARM_COUNT] = {0, 0, 0, 0};
  move[arm] = steps;
  stepper_start_watching(move, speed, watch);
}

void homing_start(uint8_t arm) {
  uint16_t rev = settings.steps_per_rev;
  if (system_home_sensor_active()) {  // already at the sensor: leave it first
    home_phase = HOME_RELEASE;
    home_move(arm, -(int16_t)(rev / HOME_RELEASE_DIVISOR), clamp_speed(rev * HOME_SEEK_TURNS_PER_S),
              SENSOR_RELEASED);
  } else {
    home_phase = HOME_SEEK;
    home_move(arm, (int16_t)(rev / 4 * HOME_SEARCH_QUARTERS), clamp_speed(rev * HOME_SEEK_TURNS_PER_S),
              SENSOR_ACTIVE);
  }
}

bool homing_step(uint8_t arm) {
  uint16_t rev = settings.steps_per_rev;
  uint16_t seek = clamp_speed(rev * HOME_SEEK_TURNS_PER_S);
  bool hit = stepper_sensor_stopped();
  switch (home_phase) {
    case HOME_SEEK:
      if (!hit) break;
      home_phase = HOME_RELEASE;
      home_move(arm, -(int16_t)(rev / HOME_RELEASE_DIVISOR), seek, SENSOR_RELEASED);
      return false;
    case HOME_RELEASE:
      if (!hit) {
        system_raise_alarm(ALARM_HOME_STUCK);
        return false;
      }
      home_phase = HOME_BACKOFF;
      home_move(arm, -(int16_t)(rev / HOME_BACKOFF_DIVISOR), seek, SENSOR_IGNORE);
      return false;
    case HOME_BACKOFF:
      home_phase = HOME_APPROACH;
      home_move(arm, (int16_t)(rev / HOME_BACKOFF_DIVISOR + rev / HOME_RELEASE_DIVISOR),
                clamp_speed(rev * HOME_SEEK_TURNS_PER_S / HOME_APPROACH_DIVISOR), SENSOR_ACTIVE);
      return false;
    case HOME_APPROACH:
      if (!hit) break;
      stepper_set_zero((uint8_t)(1 << arm));  // the sensor's edge, for now
      home_phase = HOME_OFFSET;
      if (settings.zero_offset[arm] != 0) {
        home_move(arm, settings.zero_offset[arm], seek, SENSOR_IGNORE);
        return false;
      }
      // fall through: no offset
    case HOME_OFFSET:
      stepper_set_zero((uint8_t)(1 << arm));
      return true;
    default:
      return true;
  }
  system_raise_alarm(ALARM_HOME_NOT_FOUND);
  return false;
}
