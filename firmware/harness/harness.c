/*
 * harness: run the cube-robot firmware in simavr (ATmega328P at 16 MHz) with
 * its UART on a pseudo-terminal, so the host talks to it through pyserial as
 * it would to a real Uno.
 *
 *   harness FIRMWARE.elf [--log PIN_LOG] [--realtime] [--boot-delay-ms N]
 *
 * - Prints the pty path on stdout, first thing.
 * - Holds the CPU until the pty is opened.  When the host closes the pty and
 *   opens it again, the CPU is reset (the Uno resets when the port opens,
 *   through DTR).  RAM survives a reset, as on the real chip, so .noinit works.
 *   After an open the CPU waits --boot-delay-ms of wall time (default 100;
 *   the Uno's bootloader waits longer), so the host's open() has flushed its
 *   input before the banner comes.
 * - Logs every change of the port B/C/D pins (not D0/D1, the UART) to
 *   PIN_LOG, one line each: `<cycle> <port><bit> <level>`, and `<cycle> reset`
 *   at each reset.  The log is flushed before any UART byte is passed on, so
 *   a host that has read a reply can read the pins that led to it.
 * - Control on stdin, one command a line, each answered on stdout with
 *   `ok <command> <cycle>` (or `error <message>`):
 *     press estop | release estop | press start | release start
 *     reset        the board's reset button (RAM kept)
 *     cycle        report the current cycle
 *     stack        answered `ok stack <lowest> <cycle>`: the lowest stack pointer
 *                  seen since the harness started (the stack's high-water mark,
 *                  interrupts nested in the main loop included)
 *     send-at CYCLE BYTE  put BYTE (decimal) into the UART at CYCLE, or at once
 *                  if that has passed: a host's byte at a chosen moment (tests
 *                  that depend on where in a step a `!` lands)
 *   and, for the arms' mechanics and homing sensors (arm = R L F B):
 *     sensor ARM START WIDTH REV   that arm's sensor is active while the arm is
 *                  START..START+WIDTH-1 steps (mod REV) from where it started
 *     sensor ARM none | stuck      no sensor (never switches) / always active
 *     sensor-level low | high      the input's level at a sensor (default low:
 *                  open collector to GND against the pull-up)
 *     wiring ARM normal | reversed the motor turns the other way for DIR high
 *     hand ARM STEPS               turn the arm by hand (as with the drivers off)
 *     position ARM                 answered `ok position ARM <steps> <cycle>`:
 *                  the arm's angle in steps (signed, not wrapped)
 *   The sensors share one input (PIN_HOME, wired-OR like open-collector
 *   sensors in parallel).  An arm moves by a step on each STEP rising edge
 *   while ENABLE is low (a disabled driver ignores its steps).
 *   End of stdin ends the harness.
 * - --realtime paces the simulation against the wall clock; otherwise it
 *   runs as fast as it can (5-9x real time).
 * - --isr-log FILE [--isr-vector N ...] traces interrupt vectors (default 11,
 *   TIMER1_COMPA: the step ISR; up to 4 --isr-vector), one line per event:
 *   `pending <vector> <cycle>` when one falls due (a compare match: within the
 *   instruction then running), `run <vector> <entry cycle> <cycles> <own>` for
 *   each run, from the vector's jump to the instruction after its reti: all
 *   of it, and its own (less the interrupts nested in it).  For
 *   bench/step_isr.py and tests/test_firmware_step_isr.py.
 * - --uart-log FILE appends a line for each byte the host sent as it goes into
 *   the firmware's UART: `<CLOCK_REALTIME seconds.nanoseconds> <cycle> <byte>`
 *   (decimal), flushed at once: the host's wall clock at the byte's arrival,
 *   comparable with other programs' (bench/panel.py: the emergency stop's
 *   latency from a browser's click).  Appended, so emulators started one
 *   after another can share one file.
 * No fixed paths: any number of harnesses can run side by side.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "avr_extint.h"
#include "avr_ioport.h"
#include "avr_uart.h"
#include "sim_avr.h"
#include "sim_elf.h"

#include "../cube_robot/defaults.h"
#include "../cube_robot/pins.h"

#define MCU "atmega328p"
#define FREQUENCY CPU_HZ /* defaults.h */
#define SLICE_INSTRUCTIONS 10000
#define INPUT_CAPACITY 4096
#define OUTPUT_CAPACITY 65536
#define RAM_START 0x100 /* below: registers and I/O, which a reset does clear */

/* A pin from pins.h (`LETTER, BIT`). */
#define PIN_LETTER_(letter, bit) (#letter[0])
#define PIN_BIT_(letter, bit) (bit)
#define PIN_LETTER(...) PIN_LETTER_(__VA_ARGS__)
#define PIN_NUMBER(...) PIN_BIT_(__VA_ARGS__)

struct input_pin {
    const char *name;
    char port;
    int bit;
    int pressed;
};

static struct input_pin inputs[] = {
    {"estop", PIN_LETTER(PIN_ESTOP), PIN_NUMBER(PIN_ESTOP), 0},
    {"start", PIN_LETTER(PIN_START), PIN_NUMBER(PIN_START), 0},
};
#define INPUT_COUNT (sizeof inputs / sizeof inputs[0])

/* The arms' mechanics: angle in steps (DIR high = +1, or -1 with reversed
 * wiring), and each arm's homing sensor. */
enum sensor_mode { SENSOR_NONE, SENSOR_WINDOW, SENSOR_STUCK };
struct arm_model {
    char name;
    char step_port, dir_port;
    int step_bit, dir_bit;
    long position;
    int dir_level, reversed;
    int sensor;
    long sensor_start, sensor_width, sensor_rev;
};
static struct arm_model arms[] = {
    {'R', PIN_LETTER(PIN_STEP_R), PIN_LETTER(PIN_DIR_R), PIN_NUMBER(PIN_STEP_R), PIN_NUMBER(PIN_DIR_R), 0, 0, 0, 0, 0, 0, 1},
    {'L', PIN_LETTER(PIN_STEP_L), PIN_LETTER(PIN_DIR_L), PIN_NUMBER(PIN_STEP_L), PIN_NUMBER(PIN_DIR_L), 0, 0, 0, 0, 0, 0, 1},
    {'F', PIN_LETTER(PIN_STEP_F), PIN_LETTER(PIN_DIR_F), PIN_NUMBER(PIN_STEP_F), PIN_NUMBER(PIN_DIR_F), 0, 0, 0, 0, 0, 0, 1},
    {'B', PIN_LETTER(PIN_STEP_B), PIN_LETTER(PIN_DIR_B), PIN_NUMBER(PIN_STEP_B), PIN_NUMBER(PIN_DIR_B), 0, 0, 0, 0, 0, 0, 1},
};
#define ARM_COUNT (sizeof arms / sizeof arms[0])
static int enable_level = 1;   /* drivers off until the firmware drives ENABLE low */
static int sensor_active_level = 0;
static int home_level = -1;    /* last level driven on PIN_HOME */

static avr_t *avr;
static FILE *pin_log;
static int pin_level[3][8]; /* last logged level per port B, C, D; -1 unknown */
static avr_irq_t *uart_input_irq;
static int uart_xon;
static uint8_t input_buf[INPUT_CAPACITY]; /* host -> firmware, not yet in the UART */
static size_t input_len;
static uint8_t output_buf[OUTPUT_CAPACITY]; /* firmware -> host */
static size_t output_len;
static uint64_t cycle_offset; /* keeps logged cycles increasing */
static uint16_t sp_lowest = 0xFFFF; /* the stack's high-water mark (control `stack`) */
static FILE *control_out;    /* our stdout; simavr's own chatter goes to stderr */
static uint64_t send_at_cycle; /* send-at: the byte's cycle; 0: none pending */
static uint8_t send_at_byte;
static FILE *uart_log;         /* --uart-log: each host byte's wall-clock arrival */

static void die(const char *what) {
    fprintf(stderr, "harness: %s: %s\n", what, strerror(errno));
    exit(2);
}

static uint64_t now_cycle(void) { return (uint64_t)avr->cycle + cycle_offset; }

static int sensor_active(const struct arm_model *a) {
    if (a->sensor == SENSOR_STUCK) return 1;
    if (a->sensor != SENSOR_WINDOW) return 0;
    long offset = ((a->position - a->sensor_start) % a->sensor_rev + a->sensor_rev) % a->sensor_rev;
    return offset < a->sensor_width;
}

/* The levels the harness drives on one port (the buttons, the homing input).
 * SET_EXTERNAL makes simavr keep them when the firmware rewrites the port
 * (its pull-ups): without it every PORTD write (each step pulse) read a held
 * button as released until the next slice, so a press made while an arm
 * turned never lasted the firmware's debounce.  It sets the whole port's mask. */
static void hold_driven_levels(char port) {
    uint8_t mask = 0, value = 0;
    for (size_t i = 0; i < INPUT_COUNT; i++) {
        if (inputs[i].port != port) continue;
        mask |= (uint8_t)(1 << inputs[i].bit);
        if (!inputs[i].pressed) value |= (uint8_t)(1 << inputs[i].bit);
    }
    if (PIN_LETTER(PIN_HOME) == port && home_level >= 0) {
        mask |= (uint8_t)(1 << PIN_NUMBER(PIN_HOME));
        if (home_level) value |= (uint8_t)(1 << PIN_NUMBER(PIN_HOME));
    }
    avr_ioport_external_t ext = {.name = port, .mask = mask, .value = value};
    avr_ioctl(avr, AVR_IOCTL_IOPORT_SET_EXTERNAL(port), &ext);
}

/* Drive the shared homing input from the arms' angles. */
static void drive_home(void) {
    int active = 0;
    for (size_t i = 0; i < ARM_COUNT; i++) active |= sensor_active(&arms[i]);
    int level = active ? sensor_active_level : !sensor_active_level;
    if (level == home_level) return;
    home_level = level;
    char port = PIN_LETTER(PIN_HOME);
    int bit = PIN_NUMBER(PIN_HOME);
    hold_driven_levels(port);
    avr_raise_irq(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(port), bit), level);
    uint8_t *pin = &avr->data[0x23 + 3 * (port - 'B')]; /* PINB/PINC/PIND */
    *pin = level ? (*pin | (1 << bit)) : (*pin & ~(1 << bit));
}

static void arm_pin_changed(int port, int bit, int level) {
    if (port == PIN_LETTER(PIN_ENABLE) && bit == PIN_NUMBER(PIN_ENABLE)) enable_level = level;
    for (size_t i = 0; i < ARM_COUNT; i++) {
        struct arm_model *a = &arms[i];
        if (port == a->dir_port && bit == a->dir_bit) a->dir_level = level;
        if (port == a->step_port && bit == a->step_bit && level == 1 && enable_level == 0) {
            a->position += (a->dir_level ? 1 : -1) * (a->reversed ? -1 : 1);
            drive_home();
        }
    }
}

static void pin_changed(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    int port = (int)((intptr_t)param >> 8), bit = (int)((intptr_t)param & 7);
    int level = value ? 1 : 0;
    int *last = &pin_level[port - 'B'][bit];
    if (*last == level) return;
    *last = level;
    if (pin_log) fprintf(pin_log, "%llu %c%d %d\n", (unsigned long long)now_cycle(), port, bit, level);
    arm_pin_changed(port, bit, level);
}

/* A host byte into the firmware's UART, its arrival logged with --uart-log. */
static void uart_input(uint8_t byte) {
    if (uart_log) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        fprintf(uart_log, "%lld.%09ld %llu %u\n", (long long)ts.tv_sec, ts.tv_nsec,
                (unsigned long long)now_cycle(), (unsigned)byte);
    }
    avr_raise_irq(uart_input_irq, byte);
}

static void feed_uart(void) {
    size_t sent = 0;
    while (uart_xon && sent < input_len) uart_input(input_buf[sent++]);
    if (sent && uart_log) fflush(uart_log);
    if (sent) {
        memmove(input_buf, input_buf + sent, input_len - sent);
        input_len -= sent;
    }
}

static void uart_output(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq, (void)param;
    if (output_len < OUTPUT_CAPACITY) output_buf[output_len++] = (uint8_t)value;
}

static void uart_xon_changed(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq, (void)value, (void)param;
    uart_xon = 1;
    feed_uart();
}

static void uart_xoff_changed(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq, (void)value, (void)param;
    uart_xon = 0;
}

static const uint16_t pin_register[3] = {0x23, 0x26, 0x29}; /* PINB, PINC, PIND (data space) */

static void drive_inputs(void) {
    for (size_t i = 0; i < INPUT_COUNT; i++) {
        avr_irq_t *irq = avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(inputs[i].port), inputs[i].bit);
        int level = inputs[i].pressed ? 0 : 1;
        avr_raise_irq(irq, level);
        /* simavr filters a raise to the IRQ's current value, and a reset zeroes
         * the PIN registers without touching the IRQs: set the bit directly too. */
        uint8_t mask = (uint8_t)(1 << inputs[i].bit);
        uint8_t *pin = &avr->data[pin_register[inputs[i].port - 'B']];
        *pin = level ? (*pin | mask) : (*pin & ~mask);
        hold_driven_levels(inputs[i].port); /* a pressed button holds its pin low */
    }
}

static void after_reset(void) {
    /* simavr polls level-triggered INT0/INT1 every cycle otherwise (6x slower). */
    avr_extint_set_strict_lvl_trig(avr, 0, 0);
    avr_extint_set_strict_lvl_trig(avr, 1, 0);
    uint32_t flags = 0;
    avr_ioctl(avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
    flags &= ~(uint32_t)(AVR_UART_FLAG_STDIO | AVR_UART_FLAG_POLL_SLEEP);
    avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
}

/* The ISR trace (--isr-log): avr_run executes one instruction and then
 * services an interrupt, so the vector's address shows as the PC once per
 * entry.  The ISR has returned when the stack pointer climbs above where it
 * was at the entry (its return address popped); nested runs go deeper. */
static FILE *isr_log;
#define ISR_VECTORS_MAX 4
#define VECTOR_TABLE_END (26 * 4) /* ATmega328P: 26 vectors of one jmp (4 bytes) each */
static int isr_vectors[ISR_VECTORS_MAX], isr_vector_count;
static struct { uint64_t entry, nested; uint16_t sp; int vector; } isr_frames[16];
static int isr_depth;

static int isr_traced(int vector) {
    for (int i = 0; i < isr_vector_count; i++)
        if (isr_vectors[i] == vector) return 1;
    return 0;
}

/* Every interrupt is followed (to subtract the ones nested in a traced one);
 * the traced vectors' runs are logged. */
static void trace_isr(void) {
    uint16_t sp = (uint16_t)(avr->data[R_SPL] | (avr->data[R_SPH] << 8));
    while (isr_depth > 0 && sp > isr_frames[isr_depth - 1].sp) {
        isr_depth--;
        uint64_t cycles = now_cycle() - isr_frames[isr_depth].entry;
        if (isr_depth > 0) isr_frames[isr_depth - 1].nested += cycles;
        if (isr_traced(isr_frames[isr_depth].vector))
            fprintf(isr_log, "run %d %llu %llu %llu\n", isr_frames[isr_depth].vector,
                    (unsigned long long)isr_frames[isr_depth].entry, (unsigned long long)cycles,
                    (unsigned long long)(cycles - isr_frames[isr_depth].nested));
    }
    if (avr->pc != 0 && avr->pc < VECTOR_TABLE_END && avr->pc % 4 == 0 &&
        isr_depth < (int)(sizeof isr_frames / sizeof isr_frames[0])) {
        isr_frames[isr_depth].entry = now_cycle();
        isr_frames[isr_depth].nested = 0;
        isr_frames[isr_depth].sp = sp;
        isr_frames[isr_depth].vector = (int)(avr->pc / 4);
        isr_depth++;
    }
}

static void isr_pending(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    if (value) fprintf(isr_log, "pending %d %llu\n", (int)(intptr_t)param, (unsigned long long)now_cycle());
}

/* The reset button: registers and I/O reset, RAM kept (simavr clears it). */
static void reset_cpu(void) {
    size_t ram_size = (size_t)avr->ramend + 1 - RAM_START;
    uint8_t *ram = malloc(ram_size);
    if (!ram) die("malloc");
    memcpy(ram, avr->data + RAM_START, ram_size);
    uint64_t before = now_cycle();
    avr_reset(avr);
    memcpy(avr->data + RAM_START, ram, ram_size);
    free(ram);
    if (now_cycle() < before) cycle_offset += before - now_cycle();
    after_reset();
    input_len = 0; /* bytes in flight during a reset are lost, as on the board */
    uart_xon = 0;
    memset(pin_level, 0xff, sizeof pin_level);
    if (pin_log) fprintf(pin_log, "%llu reset\n", (unsigned long long)now_cycle());
    isr_depth = 0; /* a reset abandons any ISR */
    drive_inputs();
    enable_level = 1; /* the pins float after a reset; the firmware drives ENABLE high again */
    home_level = -1;
    drive_home();
}

static double wall_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void flush_output(int master) {
    if (pin_log) fflush(pin_log);
    if (isr_log) fflush(isr_log);
    size_t done = 0;
    while (done < output_len) {
        ssize_t n = write(master, output_buf + done, output_len - done);
        if (n <= 0) break; /* nobody reading (EAGAIN/EIO): the bytes are lost, as on a wire */
        done += (size_t)n;
    }
    output_len = 0;
}

static struct arm_model *find_arm(const char *name) {
    for (size_t i = 0; i < ARM_COUNT; i++)
        if (name[0] == arms[i].name && name[1] == '\0') return &arms[i];
    return NULL;
}

/* The mechanics commands; 1 when handled (answered), 0 when not one of them. */
static int arm_command(char *line) {
    char verb[16] = "", what[16] = "", a1[24] = "";
    long start = 0, width = 0, rev = 0;
    int n = sscanf(line, "%15s %15s %23s", verb, what, a1);
    if (n < 2) return 0;
    if (strcmp(verb, "sensor-level") == 0) {
        if (strcmp(what, "low") && strcmp(what, "high")) return 0;
        sensor_active_level = what[0] == 'h';
        drive_home();
        fprintf(control_out, "ok %s %llu\n", line, (unsigned long long)now_cycle());
        return 1;
    }
    if (strcmp(verb, "sensor") && strcmp(verb, "wiring") && strcmp(verb, "hand") && strcmp(verb, "position"))
        return 0;
    struct arm_model *a = find_arm(what);
    if (!a) {
        fprintf(control_out, "error no arm '%s' (R, L, F, B)\n", what);
        return 1;
    }
    if (strcmp(verb, "position") == 0) {
        fprintf(control_out, "ok position %c %ld %llu\n", a->name, a->position, (unsigned long long)now_cycle());
        return 1;
    }
    if (strcmp(verb, "sensor") == 0 && strcmp(a1, "none") == 0) {
        a->sensor = SENSOR_NONE;
    } else if (strcmp(verb, "sensor") == 0 && strcmp(a1, "stuck") == 0) {
        a->sensor = SENSOR_STUCK;
    } else if (strcmp(verb, "sensor") == 0 &&
               sscanf(line, "%*s %*s %ld %ld %ld", &start, &width, &rev) == 3 && width > 0 && rev > 0) {
        a->sensor = SENSOR_WINDOW;
        a->sensor_start = start, a->sensor_width = width, a->sensor_rev = rev;
    } else if (strcmp(verb, "wiring") == 0 && (!strcmp(a1, "normal") || !strcmp(a1, "reversed"))) {
        a->reversed = a1[0] == 'r';
    } else if (strcmp(verb, "hand") == 0 && sscanf(a1, "%ld", &start) == 1) {
        a->position += start;
    } else {
        fprintf(control_out, "error bad arguments in '%s'\n", line);
        return 1;
    }
    drive_home();
    fprintf(control_out, "ok %s %llu\n", line, (unsigned long long)now_cycle());
    return 1;
}

static void control_command(char *line) {
    char verb[16] = "", what[16] = "";
    int n = sscanf(line, "%15s %15s", verb, what);
    if (arm_command(line)) {
        fflush(control_out);
        return;
    }
    if (n >= 1 && strcmp(verb, "reset") == 0) {
        reset_cpu();
    } else if (n >= 1 && strcmp(verb, "cycle") == 0) {
        /* nothing to do */
    } else if (n >= 1 && strcmp(verb, "stack") == 0) {
        fprintf(control_out, "ok stack %u %llu\n", (unsigned)sp_lowest, (unsigned long long)now_cycle());
        fflush(control_out);
        return;
    } else if (n >= 1 && strcmp(verb, "send-at") == 0) {
        unsigned long long at = 0;
        unsigned byte = 0;
        if (sscanf(line, "%*s %llu %u", &at, &byte) != 2 || byte > 255) {
            fprintf(control_out, "error send-at CYCLE BYTE (decimal)\n");
            fflush(control_out);
            return;
        }
        send_at_cycle = at > 0 ? at : 1;
        send_at_byte = (uint8_t)byte;
    } else if (n == 2 && (strcmp(verb, "press") == 0 || strcmp(verb, "release") == 0)) {
        size_t i;
        for (i = 0; i < INPUT_COUNT; i++)
            if (strcmp(inputs[i].name, what) == 0) break;
        if (i == INPUT_COUNT) {
            fprintf(control_out, "error unknown input '%s' (estop, start)\n", what);
            fflush(control_out);
            return;
        }
        inputs[i].pressed = verb[0] == 'p';
        drive_inputs();
    } else {
        fprintf(control_out, "error unknown command '%s' (press/release estop|start, reset, cycle, stack, send-at)\n", line);
        fflush(control_out);
        return;
    }
    fprintf(control_out, "ok %s %llu\n", line, (unsigned long long)now_cycle());
    fflush(control_out);
}

int main(int argc, char **argv) {
    const char *firmware = NULL, *log_path = NULL, *isr_log_path = NULL, *uart_log_path = NULL;
    int realtime = 0;
    double boot_delay = 0.1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--log") == 0 && i + 1 < argc) log_path = argv[++i];
        else if (strcmp(argv[i], "--realtime") == 0) realtime = 1;
        else if (strcmp(argv[i], "--boot-delay-ms") == 0 && i + 1 < argc) boot_delay = atof(argv[++i]) / 1000.0;
        else if (strcmp(argv[i], "--isr-log") == 0 && i + 1 < argc) isr_log_path = argv[++i];
        else if (strcmp(argv[i], "--uart-log") == 0 && i + 1 < argc) uart_log_path = argv[++i];
        else if (strcmp(argv[i], "--isr-vector") == 0 && i + 1 < argc && isr_vector_count < ISR_VECTORS_MAX)
            isr_vectors[isr_vector_count++] = atoi(argv[++i]);
        else if (argv[i][0] != '-' && !firmware) firmware = argv[i];
        else {
            fprintf(stderr, "usage: %s FIRMWARE.elf [--log FILE] [--realtime] [--boot-delay-ms N] "
                            "[--isr-log FILE [--isr-vector N ...]] [--uart-log FILE]\n", argv[0]);
            return 2;
        }
    }
    if (!firmware) {
        fprintf(stderr, "usage: %s FIRMWARE.elf [--log FILE] [--realtime] [--boot-delay-ms N]\n", argv[0]);
        return 2;
    }

    /* simavr prints to stdout (\"Loaded ... .text\"); keep stdout for the pty
     * path and control replies only. */
    control_out = fdopen(dup(1), "w");
    if (!control_out || dup2(2, 1) < 0) die("stdout");

    elf_firmware_t fw;
    memset(&fw, 0, sizeof fw);
    if (elf_read_firmware(firmware, &fw) != 0) {
        fprintf(stderr, "harness: cannot read firmware %s\n", firmware);
        return 2;
    }
    /* An Arduino .elf does not name its chip or clock. */
    strcpy(fw.mmcu, MCU);
    fw.frequency = FREQUENCY;
    avr = avr_make_mcu_by_name(MCU);
    if (!avr) {
        fprintf(stderr, "harness: simavr does not know %s\n", MCU);
        return 2;
    }
    avr_init(avr);
    avr_load_firmware(avr, &fw);
    avr->frequency = FREQUENCY;

    if (log_path) {
        pin_log = fopen(log_path, "w");
        if (!pin_log) die(log_path);
        fprintf(pin_log, "# cube-robot pin log: <cycle> <port><bit> <level>; %ld cycles/s\n", (long)FREQUENCY);
    }
    if (isr_log_path) {
        isr_log = fopen(isr_log_path, "w");
        if (!isr_log) die(isr_log_path);
        if (isr_vector_count == 0) isr_vectors[isr_vector_count++] = 11; /* TIMER1_COMPA: the step ISR */
        fprintf(isr_log, "# cube-robot ISR log: pending <vector> <cycle> | run <vector> <entry cycle> <cycles> <own cycles>; "
                "%ld cycles/s\n", (long)FREQUENCY);
        for (int i = 0; i < isr_vector_count; i++)
            avr_irq_register_notify(avr_get_interrupt_irq(avr, (uint8_t)isr_vectors[i]) + AVR_INT_IRQ_PENDING,
                                    isr_pending, (void *)(intptr_t)isr_vectors[i]);
    }
    if (uart_log_path) {
        uart_log = fopen(uart_log_path, "a");
        if (!uart_log) die(uart_log_path);
    }
    memset(pin_level, 0xff, sizeof pin_level);
    for (char port = 'B'; port <= 'D'; port++)
        for (int bit = 0; bit < 8; bit++) {
            if (port == 'D' && bit < 2) continue; /* the UART */
            avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(port), bit), pin_changed,
                                    (void *)(intptr_t)((port << 8) | bit));
        }
    uart_input_irq = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), uart_output, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XON), uart_xon_changed, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF), uart_xoff_changed, NULL);
    after_reset();
    drive_inputs();
    drive_home();

    /* The pty, raw, with one slave descriptor of our own kept open so the
     * line settings survive the host's close and the master never sees EIO. */
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) die("pty");
    const char *slave_name = ptsname(master);
    if (!slave_name) die("ptsname");
    char slave_path[256];
    snprintf(slave_path, sizeof slave_path, "%s", slave_name);
    int slave = open(slave_path, O_RDWR | O_NOCTTY);
    if (slave < 0) die(slave_path);
    struct termios tio;
    if (tcgetattr(slave, &tio) != 0) die("tcgetattr");
    cfmakeraw(&tio);
    if (tcsetattr(slave, TCSANOW, &tio) != 0) die("tcsetattr");
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);

    /* Host opens and closes of the pty node: the DTR reset. */
    int watch = inotify_init1(IN_NONBLOCK);
    if (watch < 0 || inotify_add_watch(watch, slave_path, IN_OPEN | IN_CLOSE_WRITE | IN_CLOSE_NOWRITE) < 0)
        die("inotify");

    fprintf(control_out, "%s\n", slave_path);
    fflush(control_out);

    int host_opens = 0, ever_opened = 0, held = 1;
    double release_at = 0, wall_start = 0;
    uint64_t cycle_start = 0;
    char control[256];
    size_t control_len = 0;

    for (;;) {
        int timeout = 0;
        if (held) {
            timeout = release_at > 0 ? (int)((release_at - wall_seconds()) * 1000) + 1 : -1;
            if (release_at > 0 && timeout < 0) timeout = 0;
        } else if (realtime) {
            double ahead = (double)(now_cycle() - cycle_start) / FREQUENCY - (wall_seconds() - wall_start);
            if (ahead > 0.002) timeout = (int)(ahead * 1000);
        }
        struct pollfd fds[3] = {
            {.fd = 0, .events = POLLIN},
            {.fd = watch, .events = POLLIN},
            {.fd = master, .events = input_len < INPUT_CAPACITY / 2 ? POLLIN : 0},
        };
        if (poll(fds, 3, timeout) < 0 && errno != EINTR) die("poll");

        if (fds[1].revents & POLLIN) {
            char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
            ssize_t len = read(watch, events, sizeof events);
            for (char *p = events; len > 0 && p < events + len;) {
                struct inotify_event *ev = (struct inotify_event *)p;
                if (ev->mask & IN_OPEN) {
                    if (host_opens++ == 0) {
                        if (ever_opened) reset_cpu(); /* DTR reset */
                        ever_opened = 1;
                        held = 1;
                        release_at = wall_seconds() + boot_delay;
                    }
                } else if (ev->mask & (IN_CLOSE_WRITE | IN_CLOSE_NOWRITE)) {
                    if (host_opens > 0) host_opens--;
                }
                p += sizeof(struct inotify_event) + ev->len;
            }
        }
        if (fds[0].revents & (POLLIN | POLLHUP)) {
            ssize_t n = read(0, control + control_len, sizeof control - 1 - control_len);
            if (n <= 0) break; /* our parent is gone */
            control_len += (size_t)n;
            char *nl;
            while ((nl = memchr(control, '\n', control_len)) != NULL) {
                *nl = '\0';
                control_command(control);
                size_t used = (size_t)(nl - control) + 1;
                memmove(control, control + used, control_len - used);
                control_len -= used;
            }
            if (control_len == sizeof control - 1) control_len = 0; /* overlong: drop */
        }
        if (fds[2].revents & POLLIN) {
            ssize_t n = read(master, input_buf + input_len, INPUT_CAPACITY - input_len);
            if (n > 0) input_len += (size_t)n;
        }
        if (held && release_at > 0 && wall_seconds() >= release_at) {
            held = 0;
            release_at = 0;
            wall_start = wall_seconds();
            cycle_start = now_cycle();
        }
        if (held) continue;

        feed_uart();
        for (int i = 0; i < SLICE_INSTRUCTIONS; i++) {
            if (send_at_cycle && now_cycle() >= send_at_cycle) {
                uart_input(send_at_byte);
                if (uart_log) fflush(uart_log);
                send_at_cycle = 0;
            }
            int state = avr_run(avr);
            uint16_t sp = (uint16_t)(avr->data[R_SPL] | (avr->data[R_SPH] << 8));
            if (sp < sp_lowest) sp_lowest = sp;
            if (isr_log) trace_isr();
            if (state == cpu_Done || state == cpu_Crashed) {
                flush_output(master);
                fprintf(stderr, "harness: firmware %s at cycle %llu (pc 0x%x)\n",
                        state == cpu_Done ? "stopped" : "crashed", (unsigned long long)now_cycle(), avr->pc);
                return 3;
            }
        }
        flush_output(master);
    }
    if (pin_log) fclose(pin_log);
    if (isr_log) fclose(isr_log);
    if (uart_log) fclose(uart_log);
    return 0;
}
