#include "steppers.h"

#include <Arduino.h>
#include <avr/interrupt.h>
#include <math.h>
#include <util/delay.h>

#include "defaults.h"
#include "io.h"
#include "pins.h"
#include "system.h"

// Timer1 runs free at F_CPU/8 = 2 MHz (0.5 us ticks); compare A schedules
// steps, compare B the servo pulses (grippers.cpp).
static const float TICKS_PER_S = F_CPU / 8.0f;

// Profile of the current move, in timer ticks (set once per move).  Step m
// fires when the ideal position passes m - 0.5; the ramps are written with
// sqrt(2m - 1) so the ISR converts one integer and takes one sqrt.
static float c_half;          // ticks to reach distance x from rest: c_half * sqrt(2x)
static float ticks_per_step;  // at max speed
static float cruise_base;     // cruise: t(m) = cruise_base + m * ticks_per_step
static float t_total;         // ticks for the whole move
static uint16_t accel_last;   // last tick of the acceleration ramp
static uint16_t decel_first;  // first tick of the deceleration ramp
static uint16_t move_steps;   // steps of the longest arm

// Step "ticks" are numbered 1..move_steps (each steps the master arm), then
// end_tick, which steps nothing and ends the move at t_total.
static volatile bool running;
static volatile bool stop_requested;
static bool stopping;
static volatile bool planning;      // the ISR's interruptible part is running
static uint16_t tick;               // last tick executed
static uint16_t end_tick;
static uint32_t next_time;          // time of the tick already scheduled
static uint8_t pend_mask;           // arms that step on the scheduled tick
static uint16_t pend_interval;      // from the scheduled tick to the one after
static uint16_t arm_steps[ARM_COUNT];
static uint16_t arm_error[ARM_COUNT];
static uint16_t stop_steps;         // `!`: steps after stop_base_tick to the stop
static float stop_sqrt;             // sqrt(2 * stop_steps + 1)
static uint16_t stop_base_tick;
static uint32_t stop_base_time;
static volatile uint32_t stopped_at_us;
static volatile int16_t position[ARM_COUNT];  // steps, updated by the ISR
static int8_t step_sign[ARM_COUNT];           // +1/-1 per arm for the current move
static uint8_t known_mask;
static bool enabled;
static uint8_t watch_for;                     // SENSOR_*: stop the move when the input gets there
static volatile bool sensor_stopped;

static inline void step_pins_high(uint8_t mask) {
  if (mask & (1 << ARM_R)) PIN_SET(PIN_STEP_R);
  if (mask & (1 << ARM_L)) PIN_SET(PIN_STEP_L);
  if (mask & (1 << ARM_F)) PIN_SET(PIN_STEP_F);
  if (mask & (1 << ARM_B)) PIN_SET(PIN_STEP_B);
}

static inline void step_pins_low(void) {
  PIN_CLEAR(PIN_STEP_R);
  PIN_CLEAR(PIN_STEP_L);
  PIN_CLEAR(PIN_STEP_F);
  PIN_CLEAR(PIN_STEP_B);
}

static void set_dir(uint8_t arm, bool positive) {
  switch (arm) {
    case ARM_R: PIN_WRITE(PIN_DIR_R, positive); break;
    case ARM_L: PIN_WRITE(PIN_DIR_L, positive); break;
    case ARM_F: PIN_WRITE(PIN_DIR_F, positive); break;
    default: PIN_WRITE(PIN_DIR_B, positive); break;
  }
}

void stepper_init(void) {
  PIN_MAKE_OUTPUT(PIN_STEP_R);
  PIN_MAKE_OUTPUT(PIN_STEP_L);
  PIN_MAKE_OUTPUT(PIN_STEP_F);
  PIN_MAKE_OUTPUT(PIN_STEP_B);
  PIN_MAKE_OUTPUT(PIN_DIR_R);
  PIN_MAKE_OUTPUT(PIN_DIR_L);
  PIN_MAKE_OUTPUT(PIN_DIR_F);
  PIN_MAKE_OUTPUT(PIN_DIR_B);
  PIN_SET(PIN_ENABLE);  // drivers off (active low) until the host sends MOTORS ON
  PIN_MAKE_OUTPUT(PIN_ENABLE);
  enabled = false;
  known_mask = 0;
  // The Arduino core set Timer1 up for PWM; take it over: normal mode, /8.
  TCCR1A = 0;
  TCCR1B = (1 << CS11);
  TIMSK1 &= (uint8_t)~(1 << OCIE1A);
}

static inline uint32_t round_ticks(float t) { return (uint32_t)(t + 0.5f); }

// Time of tick m (m >= 1) from the start of the move, rounded to timer ticks.
static uint32_t tick_time(uint16_t m) {
  float t;
  if (stopping) {
    uint16_t into = m - stop_base_tick;  // ticks since the stop began
    uint16_t left = into > stop_steps ? 0 : stop_steps - into;
    float r = into > stop_steps ? 0.0f : sqrtf((float)(2 * left + 1));
    return stop_base_time + round_ticks(c_half * (stop_sqrt - r));
  }
  if (m > move_steps) {
    t = t_total;
  } else if (m <= accel_last) {
    t = c_half * sqrtf((float)(2 * m - 1));
  } else if (m >= decel_first) {
    t = t_total - c_half * sqrtf((float)(2 * (move_steps - m) + 1));
  } else {
    t = cruise_base + (float)m * ticks_per_step;
  }
  return round_ticks(t);
}

static uint8_t tick_mask(void) {  // call once per tick, in order
  uint8_t mask = 0;
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
    arm_error[arm] += arm_steps[arm];
    if (arm_error[arm] >= move_steps) {
      arm_error[arm] -= move_steps;
      mask |= (uint8_t)(1 << arm);
    }
  }
  return mask;
}

static uint16_t to_interval(uint32_t ticks) { return ticks > 0xFFFF ? 0xFFFF : (uint16_t)ticks; }

// Switch to a stop at `accel` from the scheduled tick on (the `!` byte).
static void begin_stop(void) {
  float v = TICKS_PER_S / (float)(pend_interval ? pend_interval : 1);  // steps/s now
  float n = v * v / (2.0f * (float)settings.accel) - 0.5f;
  uint16_t extra = n > 0 ? (uint16_t)(n + 0.5f) : 0;
  uint16_t scheduled = tick + 1;
  if ((uint32_t)scheduled + extra + 1 >= end_tick) return;  // already stopping at least as fast
  stopping = true;
  stop_base_tick = scheduled;
  stop_base_time = next_time;
  stop_steps = extra;
  stop_sqrt = sqrtf((float)(2 * extra + 1));
  end_tick = scheduled + extra + 1;
}

// Prepare the tick after the scheduled one: which arms step on the scheduled
// tick and how long after it the next one comes.  Runs with interrupts on.
static void plan_next(void) {
  if (stop_requested && !stopping) begin_stop();
  uint16_t scheduled = tick + 1;
  pend_mask = scheduled < end_tick ? tick_mask() : 0;
  if (scheduled < end_tick) {
    uint32_t t = tick_time(scheduled + 1);
    pend_interval = to_interval(t - next_time);
    next_time = t;
  }
}

static void finish(void) {
  TIMSK1 &= (uint8_t)~(1 << OCIE1A);
  running = false;
  stopped_at_us = micros();
}

// Budget: the part with interrupts off is kept short (~60 cycles after the
// prologue) so the servo pulses stay exact; the step pulse's 2 us and
// plan_next() run with interrupts on and must end before the next step:
// 2000 cycles (125 us) at the 8000 steps/s limit.  Measured in simavr at that
// limit: median 840 cycles, at most 1490 with the other interrupts.
ISR(TIMER1_COMPA_vect) {
  if (!running) return;
  if (planning) {  // overrun: the previous tick is still planning; retry shortly
    OCR1A += 40;
    return;
  }
  uint8_t stepped = pend_mask;
  step_pins_high(stepped);
  OCR1A += pend_interval;
  tick++;
  if (tick >= end_tick) {  // the end tick steps nothing
    finish();
    return;
  }
  planning = true;
  sei();
  _delay_us(STEP_PULSE_US);
  step_pins_low();
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++)
    if (stepped & (1 << arm)) position[arm] += step_sign[arm];
  persist_set_part(tick);  // tick m stepped the longest arm: m steps done (kept across a reset)
  // Homing: stop on the step that reached the sensor's edge (a slow move: no ramp needed).
  if (watch_for != SENSOR_IGNORE && system_home_sensor_active() == (watch_for == SENSOR_ACTIVE)) {
    cli();
    planning = false;
    sensor_stopped = true;
    finish();
    return;
  }
  plan_next();
  cli();
  planning = false;
}

static int16_t wrap(int16_t p) {  // into 0..steps_per_rev-1
  int16_t rev = (int16_t)settings.steps_per_rev;
  p %= rev;
  return p < 0 ? p + rev : p;
}

void stepper_start(const int16_t steps[ARM_COUNT]) { stepper_start_watching(steps, 0, SENSOR_IGNORE); }

void stepper_start_watching(const int16_t steps[ARM_COUNT], uint16_t speed, uint8_t watch) {
  uint16_t n = 0;
  sensor_stopped = false;
  watch_for = watch;
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
    int16_t s = steps[arm];
    arm_steps[arm] = (uint16_t)(s < 0 ? -s : s);
    arm_error[arm] = 0;
    position[arm] = wrap(position[arm]);
    if (arm_steps[arm] > n) n = arm_steps[arm];
    step_sign[arm] = s > 0 ? 1 : -1;
    if (s != 0) set_dir(arm, (s > 0) != ((settings.invert_mask >> arm) & 1));
  }
  if (n == 0) return;
  float a = (float)settings.accel;
  float v = (float)(speed ? speed : settings.max_speed);
  move_steps = n;
  c_half = TICKS_PER_S * sqrtf(1.0f / a);  // c * sqrt(x) = c_half * sqrt(2x), c = TICKS_PER_S * sqrt(2/a)
  ticks_per_step = TICKS_PER_S / v;
  float x_ramp = v * v / (2.0f * a);        // steps to reach max speed
  float t_ramp;
  if (n >= 2.0f * x_ramp) {  // trapezoid: reaches max speed
    t_ramp = TICKS_PER_S * v / a;
    t_total = 2.0f * t_ramp + (n - 2.0f * x_ramp) * ticks_per_step;
  } else {  // triangle
    x_ramp = n / 2.0f;
    t_ramp = c_half * sqrtf(2.0f * x_ramp);
    t_total = 2.0f * t_ramp;
  }
  cruise_base = t_ramp - (x_ramp + 0.5f) * ticks_per_step;
  // m - 0.5 <= x_ramp  and  m - 0.5 >= n - x_ramp, in whole ticks.
  accel_last = (uint16_t)(x_ramp + 0.5f);
  float decel_from = n - x_ramp + 0.5f;
  decel_first = (uint16_t)decel_from;
  if (decel_first < decel_from) decel_first++;
  stopping = false;
  stop_requested = false;
  planning = false;
  tick = 0;
  end_tick = n + 1;
  uint32_t first = tick_time(1);
  next_time = first;
  pend_interval = to_interval(first);
  tick = 0;  // plan_next() looks one tick ahead of `tick`
  // Scheduled: tick 1 at `first`.  Work out its mask and the interval after it.
  pend_mask = tick_mask();
  uint32_t second = tick_time(2);
  uint16_t after_first = to_interval(second - first);
  next_time = second;
  uint8_t sreg = SREG;
  cli();
  OCR1A = TCNT1 + pend_interval;
  pend_interval = after_first;
  TIFR1 = (1 << OCF1A);
  running = true;
  TIMSK1 |= (1 << OCIE1A);
  SREG = sreg;
}

bool stepper_running(void) { return running; }

void stepper_halt(void) {
  uint8_t sreg = SREG;
  cli();
  if (running) {
    TIMSK1 &= (uint8_t)~(1 << OCIE1A);
    step_pins_low();
    running = false;
    stopped_at_us = micros();
  }
  SREG = sreg;
}

void stepper_stop_decelerating(void) { stop_requested = true; }

bool stepper_sensor_stopped(void) { return sensor_stopped; }

void stepper_enable(bool on) {
  if (on) {
    PIN_CLEAR(PIN_ENABLE);
  } else {
    PIN_SET(PIN_ENABLE);
    known_mask = 0;  // nothing holds the arms: they can be turned by hand
  }
  enabled = on;
}

bool stepper_enabled(void) { return enabled; }

int16_t stepper_position(uint8_t arm) {
  uint8_t sreg = SREG;
  cli();
  int16_t p = position[arm];
  SREG = sreg;
  return wrap(p);
}

uint8_t stepper_known_mask(void) { return known_mask; }

void stepper_set_zero(uint8_t arm_mask) {
  uint8_t sreg = SREG;
  cli();
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++)
    if (arm_mask & (1 << arm)) position[arm] = 0;
  SREG = sreg;
  known_mask |= arm_mask;
}

void stepper_forget(uint8_t arm_mask) { known_mask &= (uint8_t)~arm_mask; }

uint32_t stepper_stopped_us(void) {
  uint8_t sreg = SREG;
  cli();
  uint32_t t = stopped_at_us;
  SREG = sreg;
  return t;
}
