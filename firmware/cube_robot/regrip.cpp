#include "regrip.h"

#include <math.h>

#include "defaults.h"
#include "system.h"

static const float FRAME_MS = SERVO_FRAME_US / 1000.0f;

static uint16_t closing[ARM_COUNT];
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

static void update_kind(uint8_t kind) {
  uint16_t n = kind == TURN_QUARTER ? settings.steps_per_rev / 4 : settings.steps_per_rev / 2;
  float end = position_ms(n, n);
  turn_us[kind] = (uint32_t)(end * 1000.0f);
  float gap = settings.jaw_open_gap_mm;
  float clear = settings.jaw_clear_pct / 100.0f, contact = settings.jaw_contact_pct / 100.0f;
  float lead_f[ARM_COUNT], wait_f[ARM_COUNT];
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
    lead_f[arm] = FRAME_MS + travel_ms(arm) * contact;  // touch at the end, at the latest
    wait_f[arm] = 0;
  }
  // Interval i runs from step i's time (0 for i = 0) to step i+1's (the end for i = n).
  float t_i = 0, r_i = reach_after(kind, 0);
  for (uint16_t i = 0; i <= n; i++) {
    float t_next = i < n ? position_ms(i + 0.5f, n) : end;
    float r_next = reach_after(kind, i + 1 <= n ? i + 1 : n);
    float reach = r_i > r_next ? r_i : r_next;
    for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
      float travel = travel_ms(arm);
      // Closing: its gap must still be outside the reach at the interval's end.
      float l = end - t_next + travel * contact * (1 - reach / gap);
      if (l < lead_f[arm]) lead_f[arm] = l;
      // Opening: outside the reach by the interval's start.
      float w = FRAME_MS + travel * (clear + (1 - clear) * reach / gap) - t_i;
      if (w > wait_f[arm]) wait_f[arm] = w;
    }
    t_i = t_next;
    r_i = r_next;
  }
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
    float l = floorf(lead_f[arm]), e = floorf(end);
    if (l > e) l = e;
    lead[kind][arm] = l > 0 ? (uint16_t)l : 0;
    wait[kind][arm] = (uint16_t)ceilf(wait_f[arm]);
  }
}

void regrip_update(void) {
  for (uint8_t arm = 0; arm < ARM_COUNT; arm++) {
    // A frame, then the travel, rounded up in integers (exact, as robot/regrip.py closing_ms).
    uint32_t tenths = (uint32_t)travel_us(arm) * 10;
    closing[arm] = (uint16_t)(SERVO_FRAME_US / 1000 + (tenths + settings.servo_speed - 1) / settings.servo_speed);
  }
  for (uint8_t kind = 0; kind < TURN_KINDS; kind++) update_kind(kind);
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
  if (quarters && halves) return TURN_MIXED;
  if (quarters) return TURN_QUARTER;
  return halves ? (uint8_t)TURN_HALF : (uint8_t)TURN_OTHER;
}

uint16_t regrip_closing_ms(uint8_t arm) { return closing[arm]; }
uint16_t regrip_close_lead_ms(uint8_t kind, uint8_t arm) { return lead[kind][arm]; }
uint16_t regrip_opening_wait_ms(uint8_t kind, uint8_t arm) { return wait[kind][arm]; }
uint32_t regrip_turn_us(uint8_t kind) { return turn_us[kind]; }
