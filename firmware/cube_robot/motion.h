// The motion queue: a ring of actions (GRIP / TURN / DWELL) that the main
// loop runs one after another, reporting `done <seq> <ms>` for each.  Only the
// main loop touches it (command.cpp pushes at the head, motion_poll() pops at
// the tail), so it needs no locking.
#ifndef MOTION_H
#define MOTION_H

#include <stdint.h>

#include "steppers.h"

enum action_type { ACTION_GRIP, ACTION_TURN, ACTION_DWELL };
enum pair_id { PAIR_NONE, PAIR_RL, PAIR_FB };

struct action_t {
  uint32_t seq;
  uint8_t type;
  union {
    uint8_t pair;                // GRIP: PAIR_RL or PAIR_FB
    int16_t steps[ARM_COUNT];    // TURN: signed steps per arm
    uint16_t ms;                 // DWELL
  };
};

void motion_init(void);
uint8_t motion_depth(void);     // queued + running actions
bool motion_push(const action_t &action);  // false when full
void motion_flush(void);        // alarm: drop everything, nothing moves on
uint32_t motion_running_seq(void);  // 0 when none
// The pair that will hold once every queued action has run (TURN checks it).
uint8_t motion_planned_pair(void);
void motion_poll(void);

#endif
