// Line assembly and the sequence rules: `N<seq> <COMMAND>...*CCCCCCCC\n` in,
// exactly-once acceptance, `ok` / `err` / `rs` out.  Commands themselves are
// command.cpp's business.
#ifndef FRAMING_H
#define FRAMING_H

#include <stdint.h>

void framing_init(void);  // after system_init(): resumes after `last`
void framing_poll(void);  // main loop: consume received bytes, handle whole lines
uint32_t framing_accepted_seq(void);  // `acc`: the last seq accepted or rejected

#endif
