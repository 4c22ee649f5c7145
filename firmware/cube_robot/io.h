// Register access for the `LETTER, BIT` pin descriptions in pins.h.
// PIN_PORT(PIN_LED) -> PORTB, PIN_BIT(PIN_LED) -> 5.  The macros are variadic
// because a pin name expands to two arguments (`B, 5`) once it is passed on.
#ifndef IO_H
#define IO_H

#include <avr/io.h>

#define IO_PORT_(letter, bit) PORT##letter
#define IO_DDR_(letter, bit) DDR##letter
#define IO_PINREG_(letter, bit) PIN##letter
#define IO_BIT_(letter, bit) (bit)
#define IO_LETTER_(letter, bit) (#letter[0])

#define PIN_PORT(...) IO_PORT_(__VA_ARGS__)
#define PIN_DDR(...) IO_DDR_(__VA_ARGS__)
#define PIN_INREG(...) IO_PINREG_(__VA_ARGS__)
#define PIN_BIT(...) IO_BIT_(__VA_ARGS__)
#define PIN_LETTER(...) IO_LETTER_(__VA_ARGS__)  // 'D' for PIN_ESTOP (compile-time checks)
#define PIN_MASK(...) ((uint8_t)(1 << PIN_BIT(__VA_ARGS__)))

#define PIN_SET(...) (PIN_PORT(__VA_ARGS__) |= PIN_MASK(__VA_ARGS__))
#define PIN_CLEAR(...) (PIN_PORT(__VA_ARGS__) &= (uint8_t)~PIN_MASK(__VA_ARGS__))
#define PIN_WRITE(pin, level) ((level) ? PIN_SET(pin) : PIN_CLEAR(pin))
#define PIN_MAKE_OUTPUT(...) (PIN_DDR(__VA_ARGS__) |= PIN_MASK(__VA_ARGS__))
// Input with the internal pull-up: idle high, a switch to GND reads low.
#define PIN_MAKE_INPUT_PULLUP(...) \
  do { PIN_DDR(__VA_ARGS__) &= (uint8_t)~PIN_MASK(__VA_ARGS__); PIN_SET(__VA_ARGS__); } while (0)
#define PIN_READ(...) ((PIN_INREG(__VA_ARGS__) >> PIN_BIT(__VA_ARGS__)) & 1)

#endif
