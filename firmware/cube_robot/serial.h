// UART0: interrupt-driven receive and transmit rings.  The receive ISR takes
// the real-time bytes `!` and `?` out of the stream (system.h handles them),
// so they act even when the ring or the motion queue is full.
#ifndef SERIAL_H
#define SERIAL_H

#include <stdint.h>

void serial_init(void);
// Receive ring (producer: RX ISR writes the head; consumer: main loop, tail).
uint8_t serial_available(void);
uint8_t serial_read(void);  // only when serial_available()
// Transmit ring (producer: main loop; consumer: UDRE ISR).  Callers check
// serial_tx_free() first: a byte that does not fit is dropped, never waited for.
uint16_t serial_tx_free(void);
void serial_write(uint8_t c);

#endif
