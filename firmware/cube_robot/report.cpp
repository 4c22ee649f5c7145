#include "report.h"

#include <avr/pgmspace.h>

#include "defaults.h"
#include "framing.h"
#include "grippers.h"
#include "motion.h"
#include "steppers.h"
#include "protocol.h"
#include "puzzle3.h"
#include "serial.h"
#include "system.h"

// Code names, indexed by ERR_* / ALARM_* (protocol.h lists them once).
#define CODE_NAME(name, number, text) #name "\0"
static const char ERROR_NAMES[] PROGMEM = ERROR_CODES(CODE_NAME);
static const char ALARM_NAMES[] PROGMEM = ALARM_CODES(CODE_NAME);
#undef CODE_NAME
static const char STATE_NAMES[] PROGMEM = "IDLE\0RUN\0ALARM\0";

static char line[MAX_REPLY];
static uint8_t length;

static void add_char(char c) {
  if (length < MAX_REPLY - 2 - CRC_HEX_DIGITS) line[length++] = c;  // room for "*CCCCCCCC\n"
}

static void add_str_P(const char *s) {
  char c;
  while ((c = (char)pgm_read_byte(s++)) != 0) add_char(c);
}

// The index-th name in a PROGMEM list of NUL-separated names.
static void add_name_P(const char *names, uint8_t index, uint8_t count) {
  if (index >= count) index = 0;
  while (index--) {
    while (pgm_read_byte(names++) != 0) {
    }
  }
  add_str_P(names);
}

static void add_u32(uint32_t v) {
  char digits[10];
  uint8_t n = 0;
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) add_char(digits[--n]);
}

static void add_seq(uint32_t seq) {
  if (seq == 0) add_char('-');
  else add_u32(seq);
}

static void begin(const char *word) {
  length = 0;
  add_str_P(word);
}

static void finish(void) {
  uint32_t sum = line_crc32(line, length);
  static const char HEX_DIGITS[] = "0123456789ABCDEF";
  line[length++] = '*';
  for (int8_t shift = 4 * (CRC_HEX_DIGITS - 1); shift >= 0; shift -= 4) {
    line[length++] = HEX_DIGITS[(sum >> shift) & 15];
  }
  line[length++] = '\n';
  for (uint8_t i = 0; i < length; i++) serial_write((uint8_t)line[i]);
}

bool report_has_room(void) { return serial_tx_free() >= MAX_REPLY; }

void report_ok(uint32_t seq, bool dup) {
  begin(PSTR("ok "));
  add_u32(seq);
  if (dup) add_str_P(PSTR(" dup"));
  finish();
}

void report_error(uint32_t seq, uint8_t code) {
  begin(PSTR("err "));
  add_seq(seq);
  add_char(' ');
  add_name_P(ERROR_NAMES, code, ERR_COUNT);
  finish();
}

void report_resend(uint32_t seq) {
  begin(PSTR("rs "));
  add_u32(seq);
  finish();
}

void report_done(uint32_t seq, uint32_t ms) {
  begin(PSTR("done "));
  add_u32(seq);
  add_char(' ');
  add_u32(ms);
  finish();
}

void report_identity(void) {
  begin(PSTR("id cube-robot-fw " FW_VERSION " proto "));
  add_u32(PROTOCOL_VERSION);
  add_str_P(PSTR(" board " BOARD_NAME " q "));
  add_u32(QUEUE_DEPTH);
  add_str_P(PSTR(" rx "));
  add_u32(RX_BUFFER_SIZE);
  add_str_P(PSTR(" last "));
  add_u32(persist.last);
  add_str_P(PSTR(" cut "));
  add_u32(persist.cut);
  add_str_P(PSTR(" part "));
  if (persist.cut_done == PART_UNKNOWN) add_char('?');
  else add_u32(persist.cut_done);
  add_char('/');
  add_u32(persist.cut_total);
  add_str_P(PSTR(" boots "));
  add_u32(persist.boots);
  add_str_P(puzzle3_on() ? PSTR(" pz 3") : PSTR(" pz 2"));
  finish();
}

// time <seq> <ms>, or `time <seq> ?` when that action is not among the last TIME_SLOTS done.
void report_time(uint32_t seq) {
  uint16_t ms;
  begin(PSTR("time "));
  add_u32(seq);
  add_char(' ');
  if (persist_find_time(seq, &ms)) add_u32(ms);
  else add_char('?');
  finish();
}



void report_status(void) {
  begin(PSTR("status "));
  add_name_P(STATE_NAMES, system_state(), 3);
  add_str_P(PSTR(" q "));
  add_u32(motion_depth());
  add_str_P(PSTR(" run "));
  add_u32(motion_running_seq());
  add_str_P(PSTR(" done "));
  add_u32(persist.last);
  add_str_P(PSTR(" acc "));
  add_u32(framing_accepted_seq());
  add_str_P(PSTR(" alarm "));
  add_name_P(ALARM_NAMES, system_alarm(), ALARM_COUNT);
  finish();
}

// where <ON|OFF> R<pos> L<pos> F<pos> B<pos> grip <RLFB: O open, C closed, - never set> home <0|1>
// A position is steps from the arm's zero (0..steps_per_rev-1), `?` when not known.
void report_where(void) {
  static const char ARM_LETTERS[] = "RLFB";
  static const char GRIP_LETTERS[] = "-OC";  // gripper_position order
  begin(stepper_enabled() ? PSTR("where ON") : PSTR("where OFF"));
  uint8_t known = stepper_known_mask();
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
    add_char(' ');
    add_char(ARM_LETTERS[arm]);
    if (known & (1 << arm)) add_u32((uint32_t)stepper_position(arm));
    else add_char('?');
  }
  add_str_P(PSTR(" grip "));
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) add_char(GRIP_LETTERS[gripper_get(arm)]);
  add_str_P(PSTR(" home "));
  add_char(system_home_sensor_active() ? '1' : '0');
  finish();
}

void report_alarm(uint8_t code, uint32_t stop_us) {
  begin(PSTR("alarm "));
  add_name_P(ALARM_NAMES, code, ALARM_COUNT);
  add_char(' ');
  add_u32(stop_us);
  finish();
}

void report_button_start(void) {
  begin(PSTR("btn start"));
  finish();
}
