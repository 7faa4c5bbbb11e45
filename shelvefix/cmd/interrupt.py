"""SIGINT, SIGTERM and SIGHUP end a command the way Ctrl-C does: cleanly.

SIGHUP (a dropped SSH session, a closed terminal) is handled as SIGTERM
is, so that a run is not left half cleaned up by a lost connection.
While :func:`handled` is active, the first of these signals raises
:class:`Interrupted` (a ``KeyboardInterrupt``) in the main thread, so that
every ``with`` and ``finally`` on the way out runs: worker processes are
stopped, servers shut down and what the run created in placement deleted.
A second signal while that clean-up runs is acknowledged on stderr and
otherwise ignored, so that the clean-up is not itself cut short (each of
its waits is bounded); a third gives up on it and exits at once.
"""

import contextlib
import os
import signal
import sys
import threading

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: Signals after the first that abandon the clean-up.
GIVE_UP_AFTER = 3


class Interrupted(KeyboardInterrupt):
    """The command was asked to stop by a signal.

    :ivar signum: the signal's number
    """

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self):
        """The signal's name, e.g. ``SIGTERM``."""
        return signal.Signals(self.signum).name

    @property
    def exit_status(self):
        """128 plus the signal's number, as a shell reports it."""
        return 128 + self.signum


def _handler(received, stream):
    def handle(signum, frame):
        received.append(signum)
        if len(received) == 1:
            raise Interrupted(signum)
        if len(received) >= GIVE_UP_AFTER:
            _say(stream, 'shelvefix: %s again: clean-up abandoned, what the '
                 'run created in placement may be left behind (the '
                 'servers it started are stopped by its watchdog)\n'
                 % signal.Signals(signum).name)
            os._exit(128 + signum)
        _say(stream, 'shelvefix: %s: still cleaning up (a bounded wait); '
             'send it once more to abandon the clean-up\n'
             % signal.Signals(signum).name)
    return handle


def _say(stream, text):
    # After SIGHUP the terminal may be gone: a write that fails must not
    # raise inside the clean-up the handler interrupted.
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):
        pass


@contextlib.contextmanager
def handled(stream=None):
    """Turn SIGINT, SIGTERM, SIGHUP into :class:`Interrupted` while active.

    Outside the main thread (where Python cannot install handlers) this
    does nothing. The previous handlers come back on exit.

    :param stream: where the second and third signals are acknowledged
        (stderr)
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handle = _handler([], stream or sys.stderr)
    previous = {signum: signal.signal(signum, handle) for signum in SIGNALS}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
