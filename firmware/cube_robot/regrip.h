// The regrip's overlap (robot/regrip.py has the same arithmetic, to the
// millisecond): how long before a turn ends the taking jaws may be told to
// close, how long after the releasing jaws are told to open the next turn may
// start, and how long a jaw takes to close or open with nothing to overlap.
// Computed once per settings change for the turns plans use (each moving arm a
// quarter or a half turn); other moves get no overlap.
#ifndef REGRIP_H
#define REGRIP_H

#include <stdint.h>

#include "steppers.h"

// The moves that overlap: every moving arm a quarter turn, every one a half, or
// (two arms) one of each.
enum { TURN_QUARTER, TURN_HALF, TURN_MIXED, TURN_KINDS, TURN_OTHER = TURN_KINDS };

// The settings changed (MOTION, SERVO, JAWS, GRIPPER): the gripper times at once, the table
// anew, a little at a time from the main loop (regrip_poll).
void regrip_update(void);
void regrip_poll(void);
bool regrip_ready(uint8_t kind);  // that kind's table is done (until then its turns do not overlap)
// A move's kind (TURN_QUARTER, TURN_HALF, TURN_MIXED) when only `arms_allowed`
// move, each by a quarter or a half turn, and its table is done; else TURN_OTHER.
uint8_t regrip_turn_kind(const int16_t steps[ARM_COUNT], uint8_t arms_allowed);
// ms from a command to that gripper surely fully closed / open (its latest start: a frame and
// the new pulse width; then the travel).
uint16_t regrip_closing_ms(uint8_t arm);
uint16_t regrip_opening_ms(uint8_t arm);
// Whole servo frames after an open command by which a close command finds that gripper fully open.
uint16_t regrip_open_frames(uint8_t arm);
// ms before a turn of `kind` ends that gripper `arm` may be told to close.
uint16_t regrip_close_lead_ms(uint8_t kind, uint8_t arm);
// ms from the command opening gripper `arm` to the earliest start of a turn of `kind`.
uint16_t regrip_opening_wait_ms(uint8_t kind, uint8_t arm);
// The ideal duration of a turn of `kind`, in us (when the closing is timed from).
uint32_t regrip_turn_us(uint8_t kind);

// The open gap clears a turning layer's reach at 45 degrees (the settings are refused otherwise).
bool regrip_gap_clears(uint8_t open_gap_mm, uint8_t cube_mm);

#endif
