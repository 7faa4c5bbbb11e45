"""One stestr worker of ``tools/nova_functional.py``: nova's tests, watched.

stestr starts its workers as ``$PYTHON -m stestr.subunit_runner.run
...``; ``tools/nova_functional.py`` sets ``$PYTHON`` to this script, which

1. imports nova's functional fixtures first (nova's package patches
   eventlet in on import, and that must come before anything else),
   from the unpacked tree (the working directory), not the installed
   nova;
2. swaps nova's ``PlacementFixture`` for the backend
   ``$SHELVEFIX_NOVA_PLACEMENT`` names: ``real`` keeps nova's,
   ``double`` serves the double, ``differential`` serves real placement
   and replays every request on the double;
3. with ``$SHELVEFIX_NOVA_PROGRESS`` set, writes ``DIR/<pid>`` before
   and after each test (``<time> running <test id>`` or ``<time>
   between``), so that the runner can tell a hung worker from a slow
   one, and dumps its stacks on a signal before the runner kills it:
   SIGUSR2 writes every greenlet's stack (Python code, so only when the
   process still runs some), SIGUSR1 every native thread's (faulthandler,
   which needs nothing from the process) into ``DIR/<pid>.stacks``;
4. runs the module it was given.

Only the standard library is imported at the top, for the first point.
"""

import faulthandler
import gc
import importlib
import os
import runpy
import signal
import sys
import time
import traceback
import unittest

BACKEND_VARIABLE = 'SHELVEFIX_NOVA_PLACEMENT'
PROGRESS_VARIABLE = 'SHELVEFIX_NOVA_PROGRESS'
#: The module imported before anything else (tests set another).
FIRST_IMPORT_VARIABLE = 'SHELVEFIX_NOVA_FIRST_IMPORT'
FIRST_IMPORT = 'nova.tests.functional.fixtures'
#: What each backend puts in place of nova's fixture (None: nova's own).
SWAPS = {
    'real': None,
    'double': 'shelvefix.backends.nova_fixture',
    'differential': 'shelvefix.backends.differential',
}


def write_progress(path, state, test_id=''):
    with open(path + '.new', 'w') as progress:
        progress.write('%.3f %s %s\n' % (time.time(), state, test_id))
    os.replace(path + '.new', path)


def read_progress(path):
    """``(time, state, test id)`` of a progress file, or None."""
    try:
        with open(path) as progress:
            when, state, test_id = (progress.read().rstrip('\n') + ' ').split(
                ' ', 2)
        return float(when), state, test_id.strip()
    except (OSError, ValueError):
        return None


def _dump_greenlets(stacks):
    """Every greenlet's stack, and every reader-writer lock's holders.

    nova's ``CellDatabases`` fixture guards its cell switching with a
    ``fasteners.ReaderWriterLock``: its readers, writer and pending
    writers say who waits for whom.
    """
    greenlet = sys.modules.get('greenlet')
    for obj in gc.get_objects():
        if (greenlet is not None and isinstance(obj, greenlet.greenlet) and
                obj.gr_frame is not None):
            stacks.write('\ngreenlet %r:\n' % (obj,))
            traceback.print_stack(obj.gr_frame, file=stacks)
        elif type(obj).__name__ == 'ReaderWriterLock' and hasattr(
                obj, '_pending_writers'):
            state = (obj, dict(obj._readers), obj._writer,
                     list(obj._pending_writers))
            stacks.write('\n%r: readers %r, writer %r, pending writers '
                         '%r\n' % state)
    stacks.flush()


def watch(directory):
    """Record each test's start and end, and dump stacks on signals."""
    path = os.path.join(directory, str(os.getpid()))
    write_progress(path, 'loading')
    stacks = open(path + '.stacks', 'w')
    faulthandler.register(signal.SIGUSR1, file=stacks, all_threads=True)
    signal.signal(signal.SIGUSR2, lambda *args: _dump_greenlets(stacks))
    original = unittest.TestCase.__call__

    def call(test, *args, **kwargs):
        write_progress(path, 'running', test.id())
        try:
            return original(test, *args, **kwargs)
        finally:
            write_progress(path, 'between')

    unittest.TestCase.__call__ = call


def main(argv):
    """Be ``python -m MODULE ARGS...`` with nova's placement swapped.

    :param argv: ``['-m', MODULE, ARGS...]``, as stestr gives ``$PYTHON``
    """
    if len(argv) < 2 or argv[0] != '-m':
        sys.exit('nova_functional_worker takes -m MODULE [ARGS...], not %r'
                 % (argv,))
    backend = os.environ.get(BACKEND_VARIABLE, 'real')
    if backend not in SWAPS:
        sys.exit('%s must be one of %s, not %r'
                 % (BACKEND_VARIABLE, ', '.join(sorted(SWAPS)), backend))
    # The unpacked tree (the working directory) comes first, as it does
    # for "python -m" run there.
    sys.path[0:1] = [os.getcwd()]
    first = os.environ.get(FIRST_IMPORT_VARIABLE, FIRST_IMPORT)
    if first:
        importlib.import_module(first)
    if SWAPS[backend]:
        importlib.import_module(SWAPS[backend]).use_in_nova()
    if os.environ.get(PROGRESS_VARIABLE):
        watch(os.environ[PROGRESS_VARIABLE])
    sys.argv = [argv[1]] + argv[2:]
    runpy.run_module(argv[1], run_name='__main__', alter_sys=True)


if __name__ == '__main__':
    main(sys.argv[1:])
