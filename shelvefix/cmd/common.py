"""What the subcommands share: usage errors, configuration, backends,
progress lines.

A subcommand raises :class:`CommandError` for anything the user can fix (a
bad option value, a configuration file that cannot be read, a backend this
machine cannot run); :func:`shelvefix.cmd.main.main` prints it as one line
and exits with status 2.
"""

import os
import re
import time

from shelvefix import backends
from shelvefix import race


class CommandError(Exception):
    """What the user asked for cannot be done; the message says why."""


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


def add_json_argument(parser):
    """``--json``: print the results as one JSON document."""
    parser.add_argument('--json', action='store_true',
                        help='print the results as JSON')


def problem(exc):
    """What to tell the user about an exception, if it is not a bug.

    A placement that cannot be reached or refuses the set-up requests, a
    run that could not remove what it created from placement, a backend
    this machine cannot run, or a file that cannot be written is reported
    as one line; anything else is a bug and keeps its traceback.

    :returns: the line, or None
    """
    # Imported here: only a failing command pays for them.
    from keystoneauth1 import exceptions as ks_exc

    from shelvefix.backends import fixture
    from shelvefix import exception
    if type(exc).__name__ == 'MultipleExceptions' and exc.args:
        # A fixture's setUp failed; the first exception is the cause.
        first = exc.args[0]
        if isinstance(first, tuple) and len(first) == 3:
            return problem(first[1])
    if isinstance(exc, (CommandError, backends.BackendUnavailable,
                        backends.ServerStartError)):
        return str(exc)
    if isinstance(exc, (ks_exc.ConnectionError, ks_exc.EndpointNotFound,
                        ks_exc.DiscoveryFailure)):
        return 'placement cannot be reached: %s' % exc
    if isinstance(exc, fixture.PlacementFixtureError):
        return 'placement refused to set up the run: %s' % exc
    if isinstance(exc, exception.StressCleanupFailed):
        return str(exc)
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
        raise CommandError('bad configuration: %s' % e) from e


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
        return '%s: %s (%.0f/s, %.0f s)' % (
            self.label, bar, done / elapsed, elapsed)

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
