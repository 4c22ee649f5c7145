// Wire-protocol constants (docs/protocol.md is the contract; robot/link/protocol.py
// mirrors these numbers and a test checks that the two agree).  Keep the
// `#define ERR_<NAME> <n>` / `#define ALARM_<NAME> <n>` form: it is parsed.
#ifndef PROTOCOL_H
#define PROTOCOL_H

#include <stdint.h>

#define PROTOCOL_VERSION 2
#define MAX_LINE 48    // longest accepted line, including the newline
#define MAX_REPLY 96   // longest line the firmware sends, including the newline

// Line check `*CC`: CRC-8/SAE-J1850 of the payload (docs/protocol.md, Framing):
// poly 0x1D, init 0xFF, not reflected, xorout 0xFF; check value ("123456789") 0x4B.
#define CRC8_POLY 0x1D
#define CRC8_INIT 0xFF
#define CRC8_XOROUT 0xFF
#define CRC8_CHECK 0x4B

// Bitwise, no table (saves 256 bytes of flash): a few us a byte at 16 MHz, so
// < 0.5 ms for a MAX_REPLY line that takes 8 ms to send at 115200 baud.
static inline uint8_t line_crc8(const char *data, uint8_t length) {
  uint8_t crc = CRC8_INIT;
  for (uint8_t i = 0; i < length; i++) {
    crc ^= (uint8_t)data[i];
    for (uint8_t bit = 0; bit < 8; bit++) {
      crc = (crc & 0x80) ? (uint8_t)((crc << 1) ^ CRC8_POLY) : (uint8_t)(crc << 1);
    }
  }
  return crc ^ CRC8_XOROUT;
}

#define RT_ESTOP '!'   // real-time byte: decelerate, flush, latch ESTOP_BYTE
#define RT_STATUS '?'  // real-time byte: send a status line at once

// Error codes (sent by name: see report.cpp).
#define ERR_NONE 0
#define ERR_BAD_CHECKSUM 1
#define ERR_LINE_TOO_LONG 2
#define ERR_BAD_FORMAT 3
#define ERR_UNKNOWN_COMMAND 4
#define ERR_BAD_ARGUMENT 5
#define ERR_OUT_OF_RANGE 6
#define ERR_NOT_HOLDING 7
#define ERR_ALARM_ACTIVE 8
#define ERR_BUSY 9
#define ERR_QUEUE_FULL 10
#define ERR_COUNT 11

// Alarm codes.
#define ALARM_NONE 0
#define ALARM_ESTOP_INPUT 1
#define ALARM_ESTOP_BYTE 2
#define ALARM_RESET_DURING_MOTION 3
#define ALARM_COUNT 4

#endif
