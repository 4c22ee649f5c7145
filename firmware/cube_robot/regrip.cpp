#include "regrip.h"

#include <math.h>

#include "defaults.h"
#include "system.h"

// From a command to the latest moment the servo starts towards `width_us`: the next frame's pulse
// of that width may begin a whole frame later, and a servo knows a width when its pulse ends.
static float latest_start_ms(uint16_t width_us) { return (SERVO_FRAME_US + width_us) / 1000.0f; }

static uint16_t lead[TURN_KINDS][ARM_COUNT];
static uint16_t wait[TURN_KINDS][ARM_COUNT];
static uint32_t turn_us[TURN_KINDS];

bool regrip_gap_clears(uint8_t gap, uint8_t cube) {
  // gap > cube / 2 * (sqrt 2 - 1)  <=>  (2 gap + cube)^2 > 2 cube^2, in integers.
  uint32_t a = 2UL * gap + cube;
  return a * a > 2UL * cube * cube;
}

static uint16_t travel_us(uint8_t arm) {
  uint16_t o = settings.open_us[arm], c = settings.closed_us[arm];
  return o > c ? o - c : c - o;
}

static float travel_ms(uint8_t arm) { return travel_us(arm) * 10.0f / settings.servo_speed; }

// robot/regrip.py _position_ms: when the ideal trapezoid of `steps` reaches x (ms).
static float position_ms(float x, uint16_t steps) {
  float v = settings.max_speed, a = (float)settings.accel;
  float ramp = v * v / (2 * a);
  float peak = v;
  if (2 * ramp > steps) {
    ramp = steps / 2.0f;
    peak = sqrtf(2 * a * ramp);
  }
  float t_up = peak / a, t;
  if (x <= ramp) {
    t = sqrtf(2 * x / a);
  } else if (x <= steps - ramp) {
    t = t_up + (x - ramp) / peak;
  } else {
    float total = 2 * t_up + (steps - 2 * ramp) / peak;
    float left = steps - x;
    t = total - sqrtf(2 * (left > 0 ? left : 0) / a);
  }
  return 1000 * t;
}

// How far a layer turned by `degrees` reaches past its faces (robot/regrip.py envelope_mm).
static float envelope(float degrees) {
  float angle = degrees * ((float)M_PI / 180.0f);
  float reach = settings.cube_mm / 2.0f * (fabsf(cosf(angle)) + fabsf(sinf(angle)) - 1.0f);
  return reach > 0 ? reach : 0;  // as robot/regrip.py's max(gap, 0)
}

// The layers' reach after master step m: the arm with the most steps stands at m steps, the
// other (TURN_MIXED: a quarter against a half turn) at m/2.
static float reach_after(uint8_t kind, uint16_t m) {
  float degrees = (float)m * (360.0f / settings.steps_per_rev);
  float reach = envelope(degrees);
  if (kind == TURN_MIXED) {
    float other = envelope(degrees / 2);
    if (other > reach) reach = other;
  }
  return reach;
}

// The table is worked out a little at a time from the main loop (regrip_poll): the whole of it
// took 0.7 s on the Uno with the defaults (9 s at 6400 steps per turn), far past the host's
// acknowledgement timeout.  Only the intervals that can bind are visited: a closing's lead
// is at most a frame and its travel to the contact, so intervals ending earlier than that
// before the turn's end cannot lower it (it is walked back from the end), and an opening's
// wait is at most a frame and its travel, so intervals starting later cannot raise it.
// Both give what the whole walk gives, float for float.  Until a kind is done, its turns
// get no overlap.
static uint8_t job_kind = TURN_KINDS;  // the kind being worked out (TURN_KINDS: all done)
static bool job_waits;                  // false: the leads, walking back from the end; true: the waits
static uint16_t job_i;                  // the interval next
static uint16_t job_n;
static float job_end, job_r;            // the turn's end (ms); the reach at the neighbouring step
static float job_f[ARM_COUNT];          // the lead or wait so far, per gripper
static uint8_t ready_mask;              // kinds whose table is done

static uint16_t kind_steps(uint8_t kind) {
  return kind == TURN_QUARTER ? settings.steps_per_rev / 4 : settings.steps_per_rev / 2;
}

static void job_start(uint8_t kind, bool waits) {
  job_kind = kind;
  job_waits = waits;
  if (kind >= TURN_KINDS) return;
  job_n = kind_steps(kind);
  job_end = position_ms(job_n, job_n);
  turn_us[kind] = (uint32_t)(job_end * 1000.0f);
  float contact = settings.jaw_contact_pct / 100.0f;
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++)
    job_f[arm] = waits ? 0 : latest_start_ms(settings.closed_us[arm]) + travel_ms(arm) * contact;  // lead: touch at the end, at the latest
  job_i = waits ? 0 : job_n;
  job_r = reach_after(kind, job_i);  // the step beside the first interval (n + 1 stands at n)
}

static void job_finish(void) {
  uint8_t kind = job_kind;
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
    if (job_waits) {
      wait[kind][arm] = (uint16_t)ceilf(job_f[arm]);
    } else {
      float l = floorf(job_f[arm]), e = floorf(job_end);
      if (l > e) l = e;
      lead[kind][arm] = l > 0 ? (uint16_t)l : 0;
    }
  }
  if (job_waits) {
    ready_mask |= (uint8_t)(1 << kind);
    job_start((uint8_t)(kind + 1), false);
  } else {
    job_start(kind, true);
  }
}

// One interval of the running job.  Interval i runs from step i's time (0 for i = 0) to step
// i+1's (the end for i = n); the layers reach at most the greater of the two steps' reach.
static void job_step(void) {
  float gap = settings.jaw_open_gap_mm;
  float clear = settings.jaw_clear_pct / 100.0f, contact = settings.jaw_contact_pct / 100.0f;
  uint16_t i = job_i, n = job_n;
  bool more = false;
  if (job_waits) {
    float t_i = i == 0 ? 0 : position_ms(i - 0.5f, n);
    float r_next = reach_after(job_kind, i + 1 <= n ? i + 1 : n);
    float reach = job_r > r_next ? job_r : r_next;
    for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
      float travel = travel_ms(arm), start = latest_start_ms(settings.open_us[arm]);
      if (start + travel - t_i <= job_f[arm]) continue;  // this and every later interval: no higher
      more = true;
      // Opening: outside the reach by the interval's start.
      float w = start + travel * (clear + (1 - clear) * reach / gap) - t_i;
      if (w > job_f[arm]) job_f[arm] = w;
    }
    job_r = r_next;
    job_i = i + 1;
    if (!more || job_i > n) job_finish();
  } else {
    float t_next = i < n ? position_ms(i + 0.5f, n) : job_end;
    float r_i = reach_after(job_kind, i);
    float reach = r_i > job_r ? r_i : job_r;
    for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
      if (job_end - t_next >= job_f[arm]) continue;  // this and every earlier interval: no lower
      more = true;
      // Closing: its gap must still be outside the reach at the interval's end.
      float l = job_end - t_next + travel_ms(arm) * contact * (1 - reach / gap);
      if (l < job_f[arm]) job_f[arm] = l;
    }
    job_r = r_i;
    if (!more || i == 0) job_finish();
    else job_i = i - 1;
  }
}

void regrip_poll(void) {
  // Not while an arm moves: the step planner and a stop byte get the main loop undelayed.
  if (job_kind < TURN_KINDS && !stepper_running()) job_step();
}

bool regrip_ready(uint8_t kind) { return kind < TURN_KINDS && (ready_mask & (1 << kind)); }

void regrip_update(void) {
  ready_mask = 0;
  job_start(TURN_QUARTER, false);
}

uint8_t regrip_turn_kind(const int16_t steps[ARM_COUNT], uint8_t arms_allowed) {
  uint16_t quarter = settings.steps_per_rev / 4;
  bool quarters = false, halves = false;
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
    if (steps[arm] == 0) continue;
    if (!(arms_allowed & (1 << arm))) return TURN_OTHER;
    uint16_t s = (uint16_t)(steps[arm] < 0 ? -steps[arm] : steps[arm]);
    if (s == quarter) quarters = true;
    else if (s == 2 * quarter) halves = true;
    else return TURN_OTHER;
  }
  uint8_t kind = quarters && halves ? (uint8_t)TURN_MIXED : quarters ? (uint8_t)TURN_QUARTER
                : halves ? (uint8_t)TURN_HALF : (uint8_t)TURN_OTHER;
  return regrip_ready(kind) ? kind : (uint8_t)TURN_OTHER;  // not worked out yet: no overlap
}

// The latest start towards `width_us`, then the travel, rounded up in integers (exact, as
// robot/regrip.py _surely_there_ms): (frame + width) / 1000 + travel * 10 / speed, in 1/(1000 speed) ms.
static uint16_t surely_there_ms(uint8_t arm, uint16_t width_us) {
  uint32_t speed = settings.servo_speed;
  uint32_t num = (SERVO_FRAME_US + (uint32_t)width_us) * speed + (uint32_t)travel_us(arm) * 10000UL;
  uint32_t den = 1000UL * speed;
  return (uint16_t)((num + den - 1) / den);
}
uint16_t regrip_closing_ms(uint8_t arm) { return surely_there_ms(arm, settings.closed_us[arm]); }
uint16_t regrip_opening_ms(uint8_t arm) { return surely_there_ms(arm, settings.open_us[arm]); }
uint16_t regrip_open_frames(uint8_t arm) {
  // frames * frame >= travel - (closed - open), as robot/regrip.py open_frames: in us * speed.
  int32_t speed = settings.servo_speed;
  int32_t need = (int32_t)travel_us(arm) * 10000L -
                 ((int32_t)settings.closed_us[arm] - (int32_t)settings.open_us[arm]) * speed;
  int32_t step = (int32_t)SERVO_FRAME_US * speed;
  return need <= 0 ? 0 : (uint16_t)((need + step - 1) / step);
}
uint16_t regrip_close_lead_ms(uint8_t kind, uint8_t arm) { return lead[kind][arm]; }
uint16_t regrip_opening_wait_ms(uint8_t kind, uint8_t arm) { return wait[kind][arm]; }
uint32_t regrip_turn_us(uint8_t kind) { return turn_us[kind]; }
