"""What the subcommands share: usage errors, configuration, backends,
progress lines.

A subcommand raises :class:`CommandError` for anything the user can fix (a
bad option value, a configuration file that cannot be read, a backend this
machine cannot run); :func:`shelvefix.cmd.main.main` prints it as one line
and exits with status 2.
"""

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


def add_json_argument(parser):
    """``--json``: print the results as one JSON document."""
    parser.add_argument('--json', action='store_true',
                        help='print the results as JSON')


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
    try:
        return conf.load_config_files(config_files)
    except cfg.Error as e:
        raise CommandError('bad configuration: %s' % e) from e


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
    """A progress line on stderr once a task has run for a second.

    :param stream: where to write (stderr)
    :param label: what is running
    :param total: how many steps there will be, if known (a bar is drawn)
    :param force: also when ``stream`` is not a terminal
    """

    def __init__(self, stream, label, total=None, force=False):
        self.stream = stream
        self.label = label
        self.total = total
        self.enabled = force or getattr(stream, 'isatty', lambda: False)()
        self.start = time.monotonic()
        self.shown = False

    def __call__(self, done):
        elapsed = time.monotonic() - self.start
        if not self.enabled or elapsed < 1.0:
            return
        if self.total:
            filled = int(30 * done / self.total)
            bar = '[%s%s] %d/%d' % ('#' * filled, '.' * (30 - filled), done,
                                    self.total)
        else:
            bar = '%d interleavings' % done
        self.stream.write('\r%s: %s (%.0f/s)' % (self.label, bar,
                                                 done / elapsed))
        self.stream.flush()
        self.shown = True

    def finish(self):
        """End the line, if one was drawn."""
        if self.shown:
            self.stream.write('\n')
            self.stream.flush()
