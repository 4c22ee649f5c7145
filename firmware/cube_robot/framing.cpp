#include "framing.h"

#include "command.h"
#include "defaults.h"
#include "protocol.h"
#include "report.h"
#include "serial.h"
#include "system.h"

static const uint32_t SEQ_MAX = 2147483647UL;

static char line[MAX_LINE];   // without the newline: at most MAX_LINE - 1 bytes
static uint8_t length;
static bool too_long;         // discarding up to the next newline
static uint32_t accepted;     // last seq consumed (ok or err)
static bool synced;           // a command was accepted since the reset
static uint32_t rejected_seq; // last seq answered `err`, and its code,
static uint8_t rejected_code; // so a resend gets the same answer

void framing_init(void) {
  length = 0;
  too_long = false;
  accepted = persist.last;  // after a reset: anything above `last` is accepted
  synced = false;
  rejected_seq = 0;
}

uint32_t framing_accepted_seq(void) { return accepted; }

static int8_t hex_value(char c) {
  if (c >= '0' && c <= '9') return (int8_t)(c - '0');
  if (c >= 'A' && c <= 'F') return (int8_t)(c - 'A' + 10);
  return -1;
}

static bool allowed_in_payload(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == ' ' ||
         c == '-';
}

static void handle_line(void) {
  // Framing: PAYLOAD*CCCCCCCC with exactly eight upper-case hex digits.
  const uint8_t tail = 1 + CRC_HEX_DIGITS;  // "*" and the digits
  if (length < tail || line[length - tail] != '*') {
    bool has_star = false;
    for (uint8_t i = 0; i < length; i++) has_star |= line[i] == '*';
    report_error(0, has_star ? ERR_BAD_CHECKSUM : ERR_BAD_FORMAT);
    return;
  }
  uint32_t given = 0;
  for (uint8_t i = length - CRC_HEX_DIGITS; i < length; i++) {
    int8_t digit = hex_value(line[i]);
    if (digit < 0) {
      report_error(0, ERR_BAD_CHECKSUM);
      return;
    }
    given = (given << 4) | (uint8_t)digit;
  }
  uint8_t payload = length - tail;
  if (line_crc32(line, payload) != given) {
    report_resend(accepted + 1);  // the line cannot be trusted, not even its seq
    return;
  }
  for (uint8_t i = 0; i < payload; i++) {
    if (!allowed_in_payload(line[i])) {
      report_error(0, ERR_BAD_FORMAT);
      return;
    }
  }
  // N<seq><space>
  uint8_t i = 1;
  uint32_t seq = 0;
  if (payload < 3 || line[0] != 'N') {
    report_error(0, ERR_BAD_FORMAT);
    return;
  }
  bool overflow = false;
  while (i < payload && line[i] >= '0' && line[i] <= '9') {
    if (seq > SEQ_MAX / 10) overflow = true;
    else seq = seq * 10 + (uint32_t)(line[i] - '0');
    i++;
  }
  if (i == 1 || i >= payload || line[i] != ' ' || overflow || seq == 0 || seq > SEQ_MAX ||
      line[1] == '0') {
    report_error(0, ERR_BAD_FORMAT);
    return;
  }
  i++;
  // Exactly once.
  if (seq <= accepted) {
    if (seq == rejected_seq) report_error(seq, rejected_code);
    else report_ok(seq, true);
    return;
  }
  if (synced && seq != accepted + 1) {
    report_resend(accepted + 1);  // a gap: a line was lost
    return;
  }
  line[payload] = '\0';
  accepted = seq;  // consumed whatever the outcome (a STATUS reports itself as accepted)
  synced = true;
  uint8_t code = command_execute(seq, line + i);  // may send its reply lines first
  if (code == ERR_NONE) {
    report_ok(seq, false);
  } else {
    rejected_seq = seq;
    rejected_code = code;
    report_error(seq, code);
  }
}

void framing_poll(void) {
  while (serial_available()) {
    // A line may answer with two lines (`id` + `ok`): only take one when they fit.
    if (serial_tx_free() < 2 * MAX_REPLY) return;
    char c = (char)serial_read();
    if (c == '\r') continue;
    if (c == '\n') {
      if (too_long) report_error(0, ERR_LINE_TOO_LONG);
      else if (length > 0) handle_line();  // an empty line is ignored (a host may resync with one)
      length = 0;
      too_long = false;
      continue;
    }
    if (too_long) continue;
    if (length >= MAX_LINE - 1) {
      too_long = true;
      continue;
    }
    line[length++] = c;
  }
}
