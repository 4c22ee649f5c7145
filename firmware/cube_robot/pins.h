// Every pin the firmware uses, in one place.  ATmega328P / Arduino Uno.
//
// Each pin is written as `PORT_LETTER, BIT` so that one header serves three
// readers: the firmware (port registers via PIN_PORT()/PIN_BIT() in io.h), the
// simavr harness (port letter and bit for its pin log and input commands), and
// robot/sim/pinlog.py, which parses the `#define PIN_<NAME> <letter>, <bit>`
// lines below (keep that exact form: one define per line, comment after `//`).
// firmware/README.md shows the same map for wiring; tests/test_firmware_pins.py
// checks that the two agree.
//
// Budget: the Uno has 20 I/O pins (D0-D13, A0-A5); D0/D1 are the USB serial
// link.  We use 17 of the other 18 (A5 is free): see firmware/README.md for what
// does not fit (one ENABLE for four drivers, one input for four homing sensors).
#ifndef PINS_H
#define PINS_H

// Inputs, active low with the internal pull-up (switch to GND).
#define PIN_ESTOP     D, 2   // D2  emergency stop (INT0: stops the steppers from the interrupt)
#define PIN_START     D, 3   // D3  start button

// Stepper drivers (A4988/DRV8825 style).  The four step pins share port D so
// both arms of a pair step within a few cycles of each other.
#define PIN_STEP_R    D, 4   // D4
#define PIN_STEP_L    D, 5   // D5
#define PIN_STEP_F    D, 6   // D6
#define PIN_STEP_B    D, 7   // D7
#define PIN_DIR_R     B, 0   // D8   high = positive angle (clockwise seen from outside the face)
#define PIN_DIR_L     B, 1   // D9
#define PIN_DIR_F     B, 2   // D10
#define PIN_DIR_B     B, 3   // D11
#define PIN_ENABLE    B, 4   // D12  shared by all four drivers, active low; high (off) until MOTORS ON

#define PIN_LED       B, 5   // D13  status LED (the Uno's on-board LED)

// Gripper servos, one per arm: software pulses from the Timer1 ISR.
#define PIN_SERVO_R   C, 0   // A0
#define PIN_SERVO_L   C, 1   // A1
#define PIN_SERVO_F   C, 2   // A2
#define PIN_SERVO_B   C, 3   // A3

// The homing input, shared by the four arms' index sensors (optional): wired in
// parallel (open-collector Hall sensors or switches to GND, wired-OR), active
// low by default (SETUP H1: active high).  HOME homes one arm at a time, so one
// input serves four sensors; each arm's zero must lie outside its sensor's
// window (a negative zero offset), or the next arm's homing finds the input
// already active and stops with HOME_STUCK.  See docs/protocol.md, Homing.
#define PIN_HOME      C, 4   // A4

// A5 is free.

#endif
