// cube-robot firmware: four stepper arms and four gripper servos on an
// Arduino Uno, driven over USB serial by the host (docs/protocol.md).
//
// The bytes flow through one module per stage (in the spirit of GRBL):
//   serial   UART ISRs and rings; `!` and `?` caught in the RX ISR
//   framing  line assembly, checksum, sequence numbers, exactly-once
//   command  parse and validate a whole command, then queue or execute it
//   motion   the action queue (GRIP / TURN / DWELL / HOME), one action at a time
//   homing   HOME's phases (seek, release, back off, approach, offset)
//   stepper  the speed profile, planned in the main loop a few steps ahead,
//            and the step ISR (Timer1 compare A) that only pops it
//   servo    gripper pulses from Timer1 compare B
//   report   every line the firmware sends
//   system   IDLE / RUN / ALARM, e-stop, start button, LED, reset-proof counters
// Pins: pins.h.  Defaults and limits: defaults.h.  Codes: protocol.h.
// Nothing in loop() waits: each poll does what it can and returns.

#include "defaults.h"
#include "framing.h"
#include "motion.h"
#include "regrip.h"
#include "report.h"
#include "serial.h"
#include "grippers.h"
#include "steppers.h"
#include "system.h"

void setup() {
  system_init();
  regrip_update();  // the regrip's table for the default settings (worked out from the loop)
  stepper_init();
  gripper_init();
  motion_init();
  framing_init();
  serial_init();
  report_identity();  // the banner (the transmit ring is empty, so it fits)
}

// stepper_poll() between the others: the step ISR runs out of planned steps
// after 15 of them (1.9 ms at the 8000 steps/s limit).
void loop() {
  stepper_poll();
  system_poll();
  stepper_poll();
  framing_poll();
  stepper_poll();
  motion_poll();
  regrip_poll();  // a step of the regrip's table after a settings change (about 0.3 ms; not while stepping)
}
