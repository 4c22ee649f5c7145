// One command line (after `N<seq> `): parse and validate all of it, then
// queue the action or run the immediate command.  Returns ERR_NONE or the
// error code; immediate commands send their reply line (id/status) first.
#ifndef COMMAND_H
#define COMMAND_H

#include <stdint.h>

uint8_t command_execute(uint32_t seq, char *text);  // text: NUL-terminated, vetted bytes

#endif
