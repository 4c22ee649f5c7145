// Everything the firmware sends.  Each line is built whole, checksummed
// (`PAYLOAD*CCCCCCCC\n`) and put into the transmit ring; callers check
// report_has_room() first, so a report is never cut or waited for.
#ifndef REPORT_H
#define REPORT_H

#include <stdint.h>

bool report_has_room(void);  // one MAX_REPLY line fits in the transmit ring
void report_ok(uint32_t seq, bool dup);
void report_error(uint32_t seq, uint8_t code);  // seq 0: `err - CODE`
void report_resend(uint32_t seq);
void report_done(uint32_t seq, uint32_t ms);
void report_identity(void);
void report_time(uint32_t seq);  // `time <seq> <ms>` (or `?`): a done action's duration
void report_status(void);
void report_where(void);
void report_alarm(uint8_t code, uint32_t stop_us);
void report_button_start(void);

#endif
