// Compile-time defaults, firmware limits and buffer sizes.
//
// The defaults equal config.yaml's `motion` section; the host sends the real
// values (MOTION, SERVO and JAWS commands) at every handshake.  With them a
// quarter turn (100 steps) takes 80 ms, a half turn 130 ms (v/a + steps/v =
// 30 ms + 50 or 100 ms), a gripper 107 ms (a 20 ms servo frame, the new
// width's pulse, 400 us at 4.7 us/ms) and a regrip between turns 128 ms (robot/regrip.py).
#ifndef DEFAULTS_H
#define DEFAULTS_H

#define FW_VERSION "0.1.0"

// The board's CPU clock, once: the Makefile passes it as F_CPU, the simavr
// harness runs at it and robot/sim/pinlog.py converts cycles with it.
#define CPU_HZ 16000000L
#if defined(F_CPU) && F_CPU != CPU_HZ
#error "F_CPU (the build's clock) differs from CPU_HZ in defaults.h"
#endif
#define BOARD_NAME "uno"

#define DEFAULT_STEPS_PER_REV 400     // full revolution of an arm, in (micro)steps
#define DEFAULT_MAX_SPEED 2000        // steps/s
#define DEFAULT_ACCEL 66667           // steps/s^2 (also the `!` deceleration)
#define DEFAULT_SERVO_OPEN_US 1300    // gripper pulse width when open
#define DEFAULT_SERVO_CLOSED_US 1700  // gripper pulse width when closed (400 us, about 36 degrees)
// The jaws' travel and clearances (robot/regrip.py has the same arithmetic): the
// regrip's overlap is scheduled from these.
#define DEFAULT_SERVO_SPEED 47        // servo speed, tenths of a us of pulse width per ms (MG996R at 6 V)
#define DEFAULT_JAW_CLEAR_PCT 50      // % of the opening travel where the jaws stop touching the cube
#define DEFAULT_JAW_CONTACT_PCT 70    // % of the closing travel where the jaws first touch it
#define DEFAULT_JAW_OPEN_GAP_MM 12    // jaw to cube when fully open
#define DEFAULT_CUBE_MM 50            // the cube's edge (a turning layer's corners reach 10.4 mm past the faces)
#define DEFAULT_IDLE_OFF_S 300        // drivers off after this long without an action (0: never)
#define DEFAULT_HOME_ACTIVE_LEVEL 0   // the homing input reads this level at a sensor (0: active low)

// Bounds the MOTION / SERVO / DWELL / TURN commands are checked against.
// STEPS_PER_REV must also be a multiple of 4 (a quarter turn is whole steps).
// The main loop plans each step (~1000 cycles with its sqrt) a few steps ahead
// of the step ISR, which then needs ~200-250 cycles: at 8000 steps/s (2000
// cycles between steps) planning keeps ahead with time to spare for the rest of
// the loop; a step interval must fit Timer1's 16 bits at 2 MHz (32 ms), hence
// the minimum speed and acceleration.
#define STEPS_PER_REV_MIN 4
#define STEPS_PER_REV_MAX 6400
#define MAX_SPEED_MIN 100
#define MAX_SPEED_MAX 8000
#define ACCEL_MIN 2000
#define ACCEL_MAX 200000
#define SERVO_US_MIN 500
#define SERVO_US_MAX 2500
#define SERVO_SPEED_MIN 5     // tenths of a us per ms
#define SERVO_SPEED_MAX 200
#define JAW_PCT_MIN 5
#define JAW_PCT_MAX 95
#define JAW_OPEN_GAP_MM_MIN 1
#define JAW_OPEN_GAP_MM_MAX 60
#define CUBE_MM_MIN 20
#define CUBE_MM_MAX 120
#define DWELL_MS_MIN 1
#define DWELL_MS_MAX 60000
#define TIME_SEQ_MAX 999999999L  // TIME <seq>: nine digits (the parser's limit)
#define TIME_SLOTS 16  // durations of the last completed actions kept for TIME (.noinit)
#define TURN_ANGLE_MAX 180
#define JOG_STEPS_MAX 6400   // one JOG: at most a turn at the largest STEPS_PER_REV
#define ZERO_OFFSET_MAX 3200 // |zero offset| (steps from the sensor's edge to the arm's zero)
#define IDLE_OFF_S_MAX 3600

// Homing (HOME <arm>), as fractions of a turn so they scale with steps_per_rev:
// seek at one turn per second for at most 1.25 turns, back off until the sensor
// releases (at most half a turn) and a sixteenth further, approach at an eighth
// of a turn per second, then move by the arm's zero offset.  Speeds are kept
// within HOME_SPEED_MIN..max_speed.
#define HOME_SEEK_TURNS_PER_S 1
#define HOME_APPROACH_DIVISOR 8
#define HOME_SEARCH_QUARTERS 5
#define HOME_RELEASE_DIVISOR 2
#define HOME_BACKOFF_DIVISOR 16
#define HOME_SPEED_MIN 50

#define QUEUE_DEPTH 16       // queued + running actions (`q` in the id line)
#define RX_BUFFER_SIZE 64    // `rx` in the id line; power of two
#define TX_BUFFER_SIZE 256   // must hold two MAX_REPLY lines; indexes wrap at 256

#define SERIAL_BAUD 115200
#define BUTTON_DEBOUNCE_MS 20
#define SERVO_FRAME_US 20000  // 50 Hz
#define STEP_PULSE_US 2       // DRV8825 needs 1.9 us high, A4988 1 us

#endif
