#include "steppers.h"

#include <Arduino.h>
#include <avr/interrupt.h>
#include <math.h>

#include "defaults.h"
#include "io.h"
#include "pins.h"
#include "system.h"

// Timer1 runs free at F_CPU/8 = 2 MHz (0.5 us ticks); compare A schedules
// steps, compare B the servo pulses (grippers.cpp).
static const float TICKS_PER_S = F_CPU / 8.0f;

// Profile of the current move, in timer ticks (set once per move).  Step m
// fires when the ideal position passes m - 0.5; the ramps are written with
// sqrt(2m - 1) so the planner converts one integer and takes one sqrt.
static float c_half;          // ticks to reach distance x from rest: c_half * sqrt(2x)
static float ticks_per_step;  // at max speed
static float cruise_base;     // cruise: t(m) = cruise_base + m * ticks_per_step
static float t_total;         // ticks for the whole move
static uint16_t accel_last;   // last tick of the acceleration ramp
static uint16_t decel_first;  // first tick of the deceleration ramp
static uint16_t move_steps;   // steps of the longest arm

// Step "ticks" are numbered 1..move_steps (each steps the master arm), then
// end_tick, which steps nothing and ends the move at t_total.  The main loop
// plans them (stepper_poll: the sqrt, Bresenham) into a ring a few ticks ahead
// of the step ISR, which only pops them (as GRBL's segment buffer): the ISR
// stays short (~200 cycles, measured by bench/step_isr.py).
struct planned_tick {
  uint16_t interval;  // ticks from this tick to the next
  uint8_t mask;       // arms that step on it (bit ARM_*), or END_TICK
};
static const uint8_t END_TICK = 0x80;
static const uint8_t RING_SIZE = 16;  // power of two; 15 ticks ahead: 1.9 ms at 8000 steps/s
static planned_tick ring[RING_SIZE];
static volatile uint8_t ring_head;    // next slot the planner fills (main loop only)
static volatile uint8_t ring_tail;    // next slot the ISR takes (ISR only, once running)
// The planner fell behind: try again this much later (the schedule slips).
static const uint16_t UNDERRUN_RETRY_TICKS = 40;
// Timer1 ticks the pins stay high: one more than the pulse, as TCNT1 is read
// anywhere within its first tick.
static const uint8_t PULSE_TICKS = STEP_PULSE_US * 2 + 1;

static volatile bool running;
static volatile bool stop_requested;
static bool stopping;
static volatile uint16_t tick;      // last tick the ISR executed
static uint16_t end_tick;
static uint16_t plan_tick;          // last tick planned (in the ring or executed)
static uint32_t plan_time;          // time of tick plan_tick + 1
static volatile uint16_t stop_tick;  // `!`: the last tick executed when it came
static uint16_t stop_checked;       // `!`: the stop's first tick when last decided (0: never)
static uint16_t arm_steps[ARM_COUNT];
static uint16_t arm_error[ARM_COUNT];
static uint16_t stop_steps;         // `!`: steps after stop_base_tick to the stop
static float stop_sqrt;             // sqrt(2 * stop_steps + 1)
static uint16_t stop_base_tick;
static uint32_t stop_base_time;
static volatile uint32_t stopped_at_us;
// The ISR ends a move without calling micros() (a call would make it save
// every register): it keeps the end tick's compare time, which the main loop
// turns into micros() within the 32 ms Timer1 takes to wrap.
static volatile bool end_time_pending;
static volatile uint16_t end_compare;
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

static inline __attribute__((always_inline)) void step_pins_low(void) {
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

static void untick_mask(uint8_t mask) {  // undo a tick_mask() that returned `mask`
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
    if (mask & (1 << arm)) arm_error[arm] += move_steps;
    arm_error[arm] -= arm_steps[arm];
  }
}

static uint16_t to_interval(uint32_t ticks) { return ticks > 0xFFFF ? 0xFFFF : (uint16_t)ticks; }

// Plan tick plan_tick + 1 into the ring (caller: the ring has room).
static void plan_one(void) {
  uint16_t m = plan_tick + 1;
  planned_tick p = {0, END_TICK};
  if (m < end_tick) {
    p.mask = tick_mask();
    uint32_t t = tick_time(m + 1);
    p.interval = to_interval(t - plan_time);
    plan_time = t;
  }
  uint8_t h = ring_head;
  ring[h] = p;
  __asm__ __volatile__("" ::: "memory");  // the entry is written before the ISR can see it
  ring_head = (uint8_t)((h + 1) & (RING_SIZE - 1));
  plan_tick = m;
}

static bool ring_full(void) { return ((ring_head + 1) & (RING_SIZE - 1)) == ring_tail; }

// `!`: decelerate at `accel` from the second tick after the byte came (the
// first's time was set then: as when the ISR planned one tick ahead), or the
// first tick still free if the main loop comes later.  The ticks planned after
// that tick are dropped and planned again as a stop.  The tick itself stays in
// the ring all along (its mask is the same; only its interval, to the first
// tick of the stop, changes): had it been dropped with the rest, the main loop
// coming late (its compare due while the stop is computed, ~250 us) left the
// ISR an empty ring and the stop's first step slipped by up to that (seen as a
// 600-760 us interval at full speed).
static void begin_stop(void) {
  uint8_t sreg = SREG;
  cli();
  uint8_t t = ring_tail, h = ring_head;
  uint16_t executed = tick;
  uint16_t base = stop_tick + 2;
  if (base < executed + 1) base = executed + 1;
  if (base > plan_tick + 1 || base == stop_checked) {  // not planned yet / decided for this tick
    SREG = sreg;
    return;
  }
  uint8_t keep = (uint8_t)(base - (executed + 1));  // 1: the tick before base is still queued
  uint8_t base_slot = (uint8_t)((t + keep) & (RING_SIZE - 1));
  bool queued = base <= plan_tick;  // base's own entry is in the ring
  uint8_t first_dropped = queued ? (uint8_t)((base_slot + 1) & (RING_SIZE - 1)) : h;
  ring_head = first_dropped;  // the ISR can take base's entry, none after it
  // The interval that leads to base: the kept entry's, or the one the ISR took last.
  uint16_t interval = ring[keep ? t : (uint8_t)((t - 1) & (RING_SIZE - 1))].interval;
  SREG = sreg;
  stop_checked = base;
  float v = TICKS_PER_S / (float)(interval ? interval : 1);  // steps/s now
  float n = v * v / (2.0f * (float)settings.accel) - 0.5f;
  uint16_t extra = n > 0 ? (uint16_t)(n + 0.5f) : 0;
  if ((uint32_t)base + extra + 1 >= end_tick) {  // already stopping at least as fast
    cli();
    ring_head = h;  // the entries after base are as they were (only this loop writes them)
    SREG = sreg;
    return;
  }
  for (uint8_t i = first_dropped; i != h; i = (uint8_t)((i + 1) & (RING_SIZE - 1)))
    if (!(ring[i].mask & END_TICK)) untick_mask(ring[i].mask);
  stop_base_time = tick_time(base);  // before `stopping`: the time it was planned for
  stopping = true;
  stop_base_tick = base;
  stop_steps = extra;
  stop_sqrt = sqrtf((float)(2 * extra + 1));
  end_tick = base + extra + 1;
  if (!queued) {  // base is the next tick to plan
    plan_tick = base - 1;
    plan_time = stop_base_time;
    return;
  }
  uint32_t next = tick_time(base + 1);  // the stop's first interval ends here
  cli();
  if (ring_tail != ring_head) {  // base's entry not taken yet: it leads into the stop
    ring[base_slot].interval = to_interval(next - stop_base_time);
    plan_time = next;
  } else {  // taken meanwhile with the interval planned before: the stop follows from there
    plan_time = stop_base_time + ring[base_slot].interval;
  }
  SREG = sreg;
  plan_tick = base;
}

static void resolve_end_time(void) {
  uint8_t sreg = SREG;
  cli();
  if (end_time_pending) {
    uint16_t ago_ticks = (uint16_t)(TCNT1 - end_compare);
    stopped_at_us = micros() - ago_ticks / 2;
    end_time_pending = false;
  }
  SREG = sreg;
}

void stepper_poll(void) {
  resolve_end_time();
  if (!running) return;
  if (stop_requested && !stopping) begin_stop();
  while (plan_tick < end_tick && !ring_full()) plan_one();
}

// From the ISR: the move ended at `compare` (Timer1).
static inline __attribute__((always_inline)) void finish(uint16_t compare) {
  TIMSK1 &= (uint8_t)~(1 << OCIE1A);
  running = false;
  end_compare = compare;
  end_time_pending = true;
}

// Kept short and free of calls (a call makes it save every register): pop the
// planned tick, step, count.  The pins go high first and low at the end, after
// at least the driver's pulse width (the ISR's own work takes longer: it
// rarely waits).  Interrupts are on (ISR_NOBLOCK) but for the part from the
// running check to the next compare (~70 cycles), which also keeps the Timer1
// registers' 16-bit accesses (one shared temporary byte) from the servo ISR's:
// the servo pulses (compare B) are late by at most that.  A step edge may be
// late by another ISR; the schedule is not (OCR1A counts from the compare).
// The next step is at least 2000 cycles away, so this ISR never nests itself.
ISR(TIMER1_COMPA_vect, ISR_NOBLOCK) {
  cli();
  if (!running) return;  // halted (the e-stop's ISR may have run just now)
  uint8_t t = ring_tail;
  if (t == ring_head) {  // the planner is behind: retry shortly
    OCR1A += UNDERRUN_RETRY_TICKS;
    return;
  }
  planned_tick p = ring[t];
  uint8_t mask = p.mask;
  step_pins_high(mask);
  uint8_t pulse_start = TCNT1L;  // the low byte alone: one access, no temporary byte
  uint16_t compare = OCR1A;
  OCR1A = compare + p.interval;
  ring_tail = (uint8_t)((t + 1) & (RING_SIZE - 1));
  if (mask & END_TICK) {  // the end tick steps nothing
    finish(compare);
    return;
  }
  uint16_t done = tick + 1;
  tick = done;  // before sei(): a `!` read in the receive ISR must not see half of it
  sei();
  if (mask & (1 << ARM_R)) position[ARM_R] += step_sign[ARM_R];
  if (mask & (1 << ARM_L)) position[ARM_L] += step_sign[ARM_L];
  if (mask & (1 << ARM_F)) position[ARM_F] += step_sign[ARM_F];
  if (mask & (1 << ARM_B)) position[ARM_B] += step_sign[ARM_B];
  persist_set_part(done);  // tick m stepped the longest arm: m steps done (kept across a reset)
  // Homing: stop on the step that reached the sensor's edge (a slow move: no ramp needed).
  if (watch_for != SENSOR_IGNORE && system_home_sensor_active() == (watch_for == SENSOR_ACTIVE)) {
    cli();
    if (running) {  // not halted by the e-stop meanwhile
      sensor_stopped = true;
      finish(compare);
    }
    sei();
  }
  while ((uint8_t)(TCNT1L - pulse_start) < PULSE_TICKS) {
  }
  step_pins_low();
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
  stop_checked = 0;
  tick = 0;
  end_tick = n + 1;
  ring_head = ring_tail = 0;
  uint32_t first = tick_time(1);
  plan_tick = 0;
  plan_time = first;
  plan_one();  // tick 1; stepper_poll() plans the rest while it waits
  uint8_t sreg = SREG;
  cli();
  OCR1A = TCNT1 + to_interval(first);
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
    end_time_pending = false;
    stopped_at_us = micros();
  }
  SREG = sreg;
}

void stepper_stop_decelerating(void) {
  uint8_t sreg = SREG;
  cli();
  if (!stop_requested) {
    stop_tick = tick;
    stop_requested = true;
  }
  SREG = sreg;
}

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
  resolve_end_time();
  uint8_t sreg = SREG;
  cli();
  uint32_t t = stopped_at_us;
  SREG = sreg;
  return t;
}
