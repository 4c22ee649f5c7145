// The motion queue: a ring of actions (GRIP / TURN / JOG / OPEN / CLOSE /
// HOME / DWELL) that the main loop runs one after another, reporting
// `done <seq> <ms>` for each.  Only the main loop touches it (command.cpp
// pushes at the head, motion_poll() pops at the tail), so it needs no locking.
#ifndef MOTION_H
#define MOTION_H

#include <stdint.h>

#include "grippers.h"
#include "steppers.h"

// JOG runs as a TURN of one arm (any number of steps); OPEN and CLOSE are
// ACTION_GRIPPERS.
enum action_type { ACTION_GRIP, ACTION_TURN, ACTION_DWELL, ACTION_GRIPPERS, ACTION_HOME };
enum pair_id { PAIR_NONE, PAIR_RL, PAIR_FB };

struct action_t {
  uint32_t seq;
  uint8_t type;
  union {
    uint8_t pair;                // GRIP: PAIR_RL or PAIR_FB
    int16_t steps[ARM_COUNT];    // TURN: signed steps per arm
    uint16_t ms;                 // DWELL
    struct {
      uint8_t mask;              // GRIPPERS: the arms (bit ARM_*)
      uint8_t position;          // GRIPPER_OPEN or GRIPPER_CLOSED
    } grippers;
    uint8_t arm;                 // HOME
  };
};

void motion_init(void);
uint8_t motion_depth(void);     // queued + running actions
bool motion_push(const action_t &action);  // false when full
void motion_flush(void);        // alarm: drop everything, nothing moves on
uint32_t motion_running_seq(void);  // 0 when none
// What the grippers will be once every queued action has run (TURN, JOG and
// HOME check against it): one gripper, and the pair that then holds the cube
// (both its grippers closed, the other pair's open), or PAIR_NONE.
gripper_position motion_planned_gripper(uint8_t arm);
uint8_t motion_planned_pair(void);
uint8_t motion_pair_of(uint8_t arm);
void motion_drivers_on(void);  // MOTORS ON (restarts the idle-off clock)
void motion_poll(void);

#endif
