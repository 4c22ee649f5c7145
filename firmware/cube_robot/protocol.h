// Wire-protocol constants (docs/protocol.md is the contract).  The codes below
// are read by the host at import (robot/firmware_header.py); the other numbers
// are mirrored in robot/link/protocol.py and a test checks that the two agree.
#ifndef PROTOCOL_H
#define PROTOCOL_H

#include <stdint.h>

#define PROTOCOL_VERSION 6  // 6: PUZZLE, TILT, the 3x3x3 rules, `pz` in the id line; 5: SERVO speed, JAWS, the regrip's overlap; 4: id line part/boots, TIME; 3: CRC-32C (2: CRC-8, 1: XOR)
#define MAX_LINE 54    // longest accepted line, including the newline
#define MAX_REPLY 127  // longest line the firmware sends, including the newline (two fit the 255-byte ring)

// Line check `*CCCCCCCC`: CRC-32C (Castagnoli) of the payload (docs/protocol.md,
// Framing): reflected poly 0x82F63B78, init and xorout 0xFFFFFFFF; check value
// ("123456789") 0xE3069283.  A 16-bit check let through a few in a million
// corrupted lines at the fault proxy's rates; this lets through none.
#define CRC32_POLY 0x82F63B78UL
#define CRC32_INIT 0xFFFFFFFFUL
#define CRC32_XOROUT 0xFFFFFFFFUL
#define CRC32_CHECK 0xE3069283UL
#define CRC_HEX_DIGITS 8

// Bitwise, no table (saves 1 KB of flash): about 0.6 ms for a MAX_REPLY line
// that takes 9 ms to send at 115200 baud.
static inline uint32_t line_crc32(const char *data, uint8_t length) {
  uint32_t crc = CRC32_INIT;
  for (uint8_t i = 0; i < length; i++) {
    crc ^= (uint8_t)data[i];
    for (uint8_t bit = 0; bit < 8; bit++) {
      crc = (crc & 1) ? (crc >> 1) ^ CRC32_POLY : crc >> 1;
    }
  }
  return crc ^ CRC32_XOROUT;
}

#define RT_ESTOP '!'   // real-time byte: decelerate, flush, latch ESTOP_BYTE
#define RT_STATUS '?'  // real-time byte: send a status line at once

// Error and alarm codes: the one list of their numbers, names and meanings.
// The firmware builds its enums and the names it sends from these lists
// (report.cpp); robot/firmware_header.py reads them for the host, and a test
// checks docs/protocol.md against them.  Keep the form X(NAME, number, "text"),
// numbered 0, 1, 2, ... in order: it is parsed.
#define ERROR_CODES(X)                                                   \
  X(NONE, 0, "no error")                                                 \
  X(BAD_CHECKSUM, 1, "the line's checksum did not match")                \
  X(LINE_TOO_LONG, 2, "the line was longer than MAX_LINE bytes")         \
  X(BAD_FORMAT, 3, "the line is not `N<seq> COMMAND ...`")               \
  X(UNKNOWN_COMMAND, 4, "no such command")                               \
  X(BAD_ARGUMENT, 5, "an argument is malformed")                         \
  X(OUT_OF_RANGE, 6, "an argument is outside the firmware's limits")     \
  X(NOT_HOLDING, 7, "that arm's pair does not hold the cube")            \
  X(ALARM_ACTIVE, 8, "an alarm is latched (clear it with RESET)")        \
  X(BUSY, 9, "the action queue is not empty")                            \
  X(QUEUE_FULL, 10, "the action queue is full")                         \
  X(MOTORS_OFF, 11, "the stepper drivers are off (send MOTORS ON first)") \
  X(ARM_BLOCKED, 12, "that arm's gripper is not open and its pair does not hold the cube") \
  X(JAWS_IN_REACH, 13, "the open jaws would be inside a turning layer's reach (open gap <= cube/2 x (sqrt 2 - 1))") \
  X(PUZZLE_MODE, 14, "not a command of this puzzle mode (TILT needs PUZZLE 3)")              \
  X(OTHER_PAIR_OPEN, 15, "3x3x3: a layer turn while a gripper of the other pair is not closed") \
  X(GRIPPER_ACROSS, 16, "3x3x3: a gripper of the other pair stands at 90, across the turning layers") \
  X(OTHER_PAIR_CLOSED, 17, "3x3x3: a tilt while a gripper of the other pair is not open")    \
  X(NOT_SQUARE, 18, "3x3x3: that arm is not square (its gripper would close on a turned layer)") \
  X(POSITION_UNKNOWN, 19, "3x3x3: that arm's position is not known (HOME or ZERO it)")

#define ALARM_CODES(X)                                                       \
  X(NONE, 0, "no alarm latched")                                             \
  X(ESTOP_INPUT, 1, "the emergency-stop input was triggered")                \
  X(ESTOP_BYTE, 2, "the stop byte '!' arrived (a host's emergency stop, or line noise)") \
  X(RESET_DURING_MOTION, 3, "the board reset while an arm was moving")     \
  X(HOME_NOT_FOUND, 4, "homing: the sensor did not switch within 1.25 turns") \
  X(HOME_STUCK, 5, "homing: the sensor input never released")

#define CODE_ENUM_ERR(name, number, text) ERR_##name = number,
#define CODE_ENUM_ALARM(name, number, text) ALARM_##name = number,
enum error_code { ERROR_CODES(CODE_ENUM_ERR) ERR_COUNT };
enum alarm_code { ALARM_CODES(CODE_ENUM_ALARM) ALARM_COUNT };
#undef CODE_ENUM_ERR
#undef CODE_ENUM_ALARM

#endif
