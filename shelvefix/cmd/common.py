"""What the subcommands share: usage errors, configuration, backends,
progress lines.

A subcommand raises :class:`CommandError` for anything the user can fix (a
bad option value, a configuration file that cannot be read, a backend this
machine cannot run); :func:`shelvefix.cmd.main.main` prints it as one line
and exits with status 2.
"""

import argparse
import errno
import math
import os
import re
import time

from shelvefix import backends
from shelvefix import race


class CommandError(Exception):
    """What the user asked for cannot be done; the message says why."""


def finite_float(text):
    """An option's number, as argparse's ``type=``: finite, never nan/inf.

    ``float()`` takes ``nan``, ``inf`` and ``1e999``, and no comparison
    with a bound refuses nan (every one is false): a command would run
    with it. argparse prints the message as the option's one-line error.

    :raises argparse.ArgumentTypeError: not a number, or not finite
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError('%r is not a number' % text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(
            '%r is not a finite number' % text)
    return value


def add_config_file_argument(parser):
    """``--config-file``: oslo.config files with ``[placement]``."""
    parser.add_argument(
        '--config-file', action='append', default=[], metavar='FILE',
        help='oslo.config file(s) with a [placement] section (keystoneauth '
             'auth, session and adapter options, as in nova.conf, and the '
             'claim retry options): where --backend remote is, and how '
             'every backend\'s client retries')


def add_free_argument(parser, default):
    """``--free``: the ways of freeing allocations to run (repeatable).

    :param default: what runs without the option, for the help
    """
    parser.add_argument(
        '--free', choices=race.FREE_METHODS, action='append',
        help='only this way of freeing allocations: get-put (GET, then PUT '
             'empty allocations with the consumer generation, as nova on '
             'Rocky) or delete (DELETE, as nova since Ussuri); repeatable '
             '(default: %s)' % default)


def add_progress_argument(parser):
    """``--progress``: redraw the progress line even off a terminal."""
    parser.add_argument(
        '--progress', action='store_true',
        help='redraw a progress bar on stderr even when it is not a '
             'terminal (elsewhere a plain progress line is written every '
             '%d s)' % Progress.EVERY)


def add_cluster_argument(parser):
    """``--cluster``: where explorations run (:mod:`shelvefix.cluster`)."""
    parser.add_argument(
        '--cluster', default='local', metavar='WHERE',
        help='local (the default: this process, with --workers forked '
             'workers), local:N (a Dask cluster of N worker processes on '
             'this machine) or tcp://HOST:PORT (a running Dask scheduler '
             'and its workers); each exploration, and each subtree far '
             'ahead of a search, is a task. Needs pip install '
             '\'shelvefix[cluster]\'')


def check_cluster(args):
    """Read ``--cluster`` into a :class:`~shelvefix.cluster.Spec`.

    :raises CommandError: a bad value, the engine not installed, or
        ``--workers`` beside a Dask cluster
    """
    from shelvefix import cluster
    try:
        args.cluster = cluster.parse(args.cluster)
    except ValueError as e:
        raise CommandError(str(e)) from None
    if not args.cluster.engine:
        return
    if not cluster.available():
        raise CommandError(cluster.INSTALL_HINT % args.cluster.text)
    if args.workers not in (None, 1):
        raise CommandError(
            '--workers applies to --cluster local: on a Dask cluster, its '
            'worker processes explore')
    args.workers = 1


def check_workers(args):
    """``--workers``: forked explorer processes, at most one per CPU.

    Unset (None), it is one per CPU with the double, else 1.

    :raises CommandError: not positive, more than the CPUs, or more than
        1 with a backend forked workers cannot share
    """
    from shelvefix import backends
    from shelvefix.explorer import parallel
    cpus = parallel.available_cpus()
    if args.workers is None:
        args.workers = cpus if args.backend == backends.DOUBLE else 1
        return
    if args.workers < 1:
        raise CommandError('--workers needs a positive number')
    if args.workers > 1 and args.backend != backends.DOUBLE:
        raise CommandError(
            '--workers %d needs --backend double: worker processes are '
            'forked, and the %s backend\'s connections cannot be shared '
            'with them' % (args.workers, args.backend))
    if args.workers > cpus:
        raise CommandError(
            '--workers %d: this machine lets the search use %d CPU(s), and '
            'more workers than CPUs only slow it down; use at most %d'
            % (args.workers, cpus, cpus))


def add_json_argument(parser):
    """``--json``: print the results as one JSON document."""
    parser.add_argument('--json', action='store_true',
                        help='print the results as JSON')


def problem(exc):
    """What to tell the user about an exception, if it is not a bug.

    A placement that cannot be reached or refuses the set-up requests, a
    run that could not remove what it created from placement, a backend
    this machine cannot run, a file that cannot be written or read (the
    path and the operating system's reason) or an output that cannot be
    written is reported as one line; anything else is a bug and keeps its
    traceback.

    :returns: the line, or None
    """
    # Imported here: only a failing command pays for them.
    from keystoneauth1 import exceptions as ks_exc

    from shelvefix.backends import fixture
    from shelvefix.cmd import output
    from shelvefix import exception
    if cause(exc) is not exc:
        return problem(cause(exc))
    if isinstance(exc, (CommandError, backends.BackendUnavailable,
                        backends.ServerStartError, output.OutputError)):
        return str(exc)
    if isinstance(exc, OSError):
        return os_error(exc)
    if isinstance(exc, (ks_exc.ConnectionError, ks_exc.EndpointNotFound,
                        ks_exc.DiscoveryFailure)):
        return 'placement cannot be reached: %s' % exc
    if isinstance(exc, fixture.PlacementFixtureError):
        return 'placement refused to set up the run: %s' % exc
    if isinstance(exc, exception.StressCleanupFailed):
        return str(exc)
    return None


def cause(exc):
    """What went wrong: a fixture's first exception, else ``exc``.

    A fixture whose setUp fails raises ``MultipleExceptions``, the cause
    first (and fixtures' ``SetupError`` last).
    """
    if type(exc).__name__ == 'MultipleExceptions' and exc.args:
        first = exc.args[0]
        if isinstance(first, tuple) and len(first) == 3:
            return cause(first[1])
    return exc


#: Errors of the machine, not of shelvefix, even without a path: a full
#: or read-only disk, a quota, no memory or file descriptors left.
_MACHINE_ERRNOS = frozenset(getattr(errno, code) for code in (
    'ENOSPC', 'EDQUOT', 'EROFS', 'EIO', 'ENOMEM', 'EMFILE', 'ENFILE'))


def os_error(exc):
    """An ``OSError`` in one line: the path(s) and the reason; or None.

    None for one that names no path and is not the machine's (a full or
    read-only disk, a quota, no memory or file descriptors left): that is
    a bug until shown otherwise.
    """
    reason = exc.strerror or str(exc)
    if exc.filename is not None:
        paths = ' -> '.join(
            os.fsdecode(name) if isinstance(name, (str, bytes)) else str(name)
            for name in (exc.filename, exc.filename2) if name is not None)
        return '%s: %s' % (paths, reason)
    if exc.errno in _MACHINE_ERRNOS:
        return reason
    return None


def one_line(text):
    """A message on one line: what failed, and why.

    A server's start failure ends with its log's tail: the first line says
    what failed, and the last exception in the tail why.
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) <= 1:
        return lines[0] if lines else text
    reasons = [line for line in lines[1:]
               if re.match(r'^([a-z_]\w*\.)*[A-Z]\w*: ', line)]
    return '%s ... %s' % (lines[0].rstrip(':'), (reasons or lines)[-1])


def check_writable(path):
    """Refuse an output file that cannot be written, before any work.

    :raises CommandError: naming the path and why
    """
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise CommandError('cannot write %s: it is a directory' % path)
    if not os.path.isdir(directory):
        raise CommandError('cannot write %s: no directory %s'
                           % (path, directory))
    target = path if os.path.exists(path) else directory
    if not os.access(target, os.W_OK):
        raise CommandError('cannot write %s: permission denied' % path)
    # Root passes every access check, and some file systems (/proc, a
    # read-only mount) refuse only when asked: open it, without
    # truncating, and leave no file that was not there.
    existed = os.path.exists(path)
    try:
        with open(path, 'a'):
            pass
    except OSError as e:
        raise CommandError('cannot write %s: %s' % (path, e.strerror or e))
    if not existed:
        os.unlink(path)


def load_conf(config_files):
    """The configuration read from ``--config-file`` files.

    :returns: an oslo.config ``ConfigOpts``, or None without files (the
        library then uses its global CONF)
    :raises CommandError: a file cannot be read or holds a bad value
    """
    if not config_files:
        return None
    from oslo_config import cfg

    from shelvefix import conf
    for path in config_files:
        check_text_file(path, '--config-file %s' % path)
    try:
        return conf.load_config_files(config_files)
    except (cfg.Error, OSError, UnicodeError) as e:
        # oslo.config names the file by its LocationInfo's repr.
        text = _LOCATION.sub(r'in \1', str(e))
        raise CommandError('bad configuration: %s' % text) from e


_LOCATION = re.compile(r"from LocationInfo\(location=<[^>]*>, "
                       r"detail='([^']*)'\)")


def check_text_file(path, what):
    """Refuse a file that cannot be read as UTF-8 text, before any work.

    :param what: how the message names the file, e.g. ``--config-file
        nova.conf``
    :raises CommandError: naming the file and what is wrong with it
    """
    try:
        with open(path, 'rb') as f:
            data = f.read()
    except FileNotFoundError:
        raise CommandError('%s: no such file' % what)
    except IsADirectoryError:
        raise CommandError('%s: is a directory, not a file' % what)
    except OSError as e:
        raise CommandError('%s: cannot be read: %s' % (what, e.strerror))
    if b'\0' in data:
        raise CommandError('%s: not a text file (it holds a NUL byte at '
                           'offset %d)' % (what, data.index(b'\0')))
    try:
        data.decode('utf-8')
    except UnicodeDecodeError as e:
        raise CommandError('%s: not UTF-8 text (byte 0x%02x at offset %d)'
                           % (what, data[e.start], e.start))


def make_backend(name, config_files):
    """The placement fixture for ``--backend``, not set up yet.

    Every backend's report client reads ``[placement]`` from
    ``config_files``; the remote backend also its endpoint and
    credentials.

    :raises CommandError: the backend cannot be used here, or ``remote``
        without ``--config-file``
    """
    if name == backends.REMOTE and not config_files:
        raise CommandError('--backend remote needs --config-file with a '
                           '[placement] section')
    try:
        return backends.make_backend(name, load_conf(config_files))
    except backends.BackendUnavailable as e:
        raise CommandError(str(e)) from e


class Progress(object):
    """Progress on stderr, once a task has run for a second.

    On a terminal (or with ``force``) one line is redrawn in place, a bar
    when the total is known. Elsewhere (a CI log, a pipe) a plain line is
    written every :attr:`EVERY` seconds, so that a long run is seen to
    move without filling the log.

    :param stream: where to write (stderr)
    :param label: what is running
    :param total: how many steps there will be, if known
    :param force: redraw in place even when ``stream`` is not a terminal
    :param unit: what a step is, for the text
    """

    #: Seconds between two plain lines when not on a terminal.
    EVERY = 10.0

    def __init__(self, stream, label, total=None, force=False,
                 unit='interleavings'):
        self.stream = stream
        self.label = label
        self.total = total
        self.unit = unit
        self.redraw = force or getattr(stream, 'isatty', lambda: False)()
        self.start = time.monotonic()
        self.shown = False
        self._last_line = self.start

    def _text(self, done, elapsed):
        if self.total:
            filled = int(30 * done / self.total)
            bar = '[%s%s] %d/%d' % ('#' * filled, '.' * (30 - filled), done,
                                    self.total)
        else:
            bar = '%d %s' % (done, self.unit)
        rate = done / elapsed
        # Tasks of minutes each go at a fraction of one a second.
        return '%s: %s (%s/s, %.0f s)' % (
            self.label, bar, '%.1f' % rate if rate < 10 else '%.0f' % rate,
            elapsed)

    def __call__(self, done):
        now = time.monotonic()
        elapsed = now - self.start
        if elapsed < 1.0:
            return
        if self.redraw:
            self.stream.write('\r' + self._text(done, elapsed))
            self.shown = True
        elif now - self._last_line >= self.EVERY:
            self.stream.write(self._text(done, elapsed) + '\n')
            self._last_line = now
        else:
            return
        self.stream.flush()

    def finish(self):
        """End the redrawn line, if one was drawn."""
        if self.shown:
            self.stream.write('\n')
            self.stream.flush()


def cell_label(scenario, cell):
    """How progress names one cell: ``scenario/variant[/free][/fault]``."""
    return '/'.join([scenario.name] + [part for part in cell if part])
