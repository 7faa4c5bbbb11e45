"""Instance power states (nova's integer codes)."""

NOSTATE = 0x00
RUNNING = 0x01
PAUSED = 0x03
SHUTDOWN = 0x04
CRASHED = 0x06
SUSPENDED = 0x07
