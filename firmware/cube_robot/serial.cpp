#include "serial.h"

#include <avr/interrupt.h>
#include <avr/io.h>

#include "defaults.h"
#include "protocol.h"
#include "system.h"

#if (RX_BUFFER_SIZE & (RX_BUFFER_SIZE - 1)) != 0
#error RX_BUFFER_SIZE must be a power of two
#endif
#if TX_BUFFER_SIZE != 256
#error TX ring indexes are uint8_t and wrap at 256
#endif

static volatile uint8_t rx_buf[RX_BUFFER_SIZE];
static volatile uint8_t rx_head;  // written by the RX ISR
static volatile uint8_t rx_tail;  // written by the main loop
static volatile uint8_t tx_buf[TX_BUFFER_SIZE];
static volatile uint8_t tx_head;  // written by the main loop
static volatile uint8_t tx_tail;  // written by the UDRE ISR
static volatile uint8_t tx_count;

void serial_init(void) {
  // Double speed: UBRR 16 gives 117647 baud (2.1% off 115200), as the Arduino core does.
  UCSR0A = (1 << U2X0);
  UBRR0 = (uint16_t)((F_CPU / 8 / SERIAL_BAUD) - 1);
  UCSR0C = (1 << UCSZ01) | (1 << UCSZ00);  // 8N1
  UCSR0B = (1 << RXEN0) | (1 << TXEN0) | (1 << RXCIE0);
}

ISR(USART_RX_vect) {
  uint8_t c = UDR0;
  if (c == RT_ESTOP) {
    system_estop_byte();
    return;
  }
  if (c == RT_STATUS) {
    system_request_status();
    return;
  }
  uint8_t next = (uint8_t)((rx_head + 1) & (RX_BUFFER_SIZE - 1));
  if (next != rx_tail) {  // full: the byte is lost; the line's checksum catches it
    rx_buf[rx_head] = c;
    rx_head = next;
  }
}

uint8_t serial_available(void) {
  return (uint8_t)((rx_head - rx_tail) & (RX_BUFFER_SIZE - 1));
}

uint8_t serial_read(void) {
  uint8_t c = rx_buf[rx_tail];
  rx_tail = (uint8_t)((rx_tail + 1) & (RX_BUFFER_SIZE - 1));
  return c;
}

ISR(USART_UDRE_vect) {
  UDR0 = tx_buf[tx_tail];
  tx_tail++;
  if (--tx_count == 0) UCSR0B &= (uint8_t)~(1 << UDRIE0);
}

uint16_t serial_tx_free(void) {
  return (uint16_t)(TX_BUFFER_SIZE - 1 - tx_count);
}

void serial_write(uint8_t c) {
  if (serial_tx_free() == 0) return;
  tx_buf[tx_head] = c;
  tx_head++;
  uint8_t sreg = SREG;
  cli();
  tx_count++;
  UCSR0B |= (1 << UDRIE0);
  SREG = sreg;
}
