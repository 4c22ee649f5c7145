"""The virtual robot: mock firmware, fault proxy, simavr emulator wrapper, cube renderer."""
