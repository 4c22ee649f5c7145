// Wire-protocol constants (docs/protocol.md is the contract; robot/link/protocol.py
// mirrors these numbers and a test checks that the two agree).  Keep the
// `#define ERR_<NAME> <n>` / `#define ALARM_<NAME> <n>` form: it is parsed.
#ifndef PROTOCOL_H
#define PROTOCOL_H

#define PROTOCOL_VERSION 1
#define MAX_LINE 48    // longest accepted line, including the newline
#define MAX_REPLY 96   // longest line the firmware sends, including the newline

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
