"""``shelvefix stress``: K servers × M cycles under real concurrency.

By default placement runs the way a deployment runs it: placement's WSGI
application under gunicorn with several workers on 127.0.0.1, backed by
PostgreSQL (installed and started by the packaged ``postgresql.sh`` if
missing, or ``--db-url`` for a database of your own),
reached over real HTTP. ``--database sqlite`` uses a file-backed sqlite
database instead; ``--backend`` runs against the in-process double or real
placement, or a remote one from ``--config-file``.
"""

import argparse
import contextlib
import os

from shelvefix import backends
from shelvefix.cmd import common
from shelvefix.cmd import stress_run
from shelvefix import race

#: The most servers a run may have.
MAX_SERVERS = 1000
#: Servers x cycles of one ordering's run, at most: it keeps every
#: request's record, about 4 KB a cycle (see doc/source/commands/stress).
MAX_CYCLES = 100000
#: The cluster script's data directory when none is given.
DEFAULT_PG_DATA = '/tmp/shelvefix-pg'
DEFAULT_SERVER_WORKERS = 2
#: What --help says of the connect timeout (the server module's
#: CONNECT_TIMEOUT, in backends.database: not imported for a --help).
DB_CONNECT_TIMEOUT = 10
#: gunicorn workers per CPU, at most: more add memory, not throughput.
SERVER_WORKERS_PER_CPU = 4
#: Seconds between status polls, at most: a cycle waits 30 s for the
#: offload, so it still polls three times.
MAX_POLL_INTERVAL = 10.0
#: --compute-latency, at most (ms): the offload's two requests before the
#: state reads offloaded, and a start delay, stay inside that 30 s wait.
MAX_COMPUTE_LATENCY_MS = 5000.0
HELP = ('K servers x M shelve-offload/unshelve cycles with real threads '
        'against placement over real HTTP')
DESCRIPTION = (
    'K servers, each in its own thread, cycle between two compute hosts: '
    'shelve-offload, poll the state, unshelve as soon as it reads '
    'SHELVED_OFFLOADED. Nothing is paused or ordered: this is the race as '
    'a gate run meets it. Each cycle is classified from placement itself, '
    'and at the end every provider\'s usage is compared with what the '
    'servers\' states say it should be.',
    'By default placement runs as a deployment runs it: placement\'s WSGI '
    'application under gunicorn (--server-workers processes) on 127.0.0.1 '
    'over real HTTP, on PostgreSQL (a throwaway cluster on 127.0.0.1:5433, '
    'installed and started by the packaged postgresql.sh if needed), a '
    'sqlite file (--database sqlite) or a database of your own (--db-url). '
    '--backend real or double runs in-process instead, --backend remote '
    'against the placement of --config-file.',
    'Verdict: 0 only if every cycle of every ordering ran to its end and '
    'was classified, and the corrected order shows no bad outcome caused '
    'by ordering and no usage was lost; 1 otherwise, the verdict line '
    'naming why (a cycle that raised is lost, counted by cause, and is '
    'no evidence, in either ordering). Placement failing by itself '
    '(a cycle classified "placement failed") is reported, not judged.',
)
SERVER = 'server'


def add_arguments(parser):
    """Add the command's options to its subparser."""
    parser.add_argument('--servers', type=int, default=4, metavar='K',
                        help='servers cycling concurrently (default 4, at '
                             'most %d: each is a thread of this process, '
                             'and its compute host\'s offload another)'
                             % MAX_SERVERS)
    parser.add_argument('--cycles', type=int, default=10, metavar='M',
                        help='shelve-offload/unshelve cycles per server '
                             '(default 10; servers x cycles at most %d per '
                             'ordering: the run keeps a record of every '
                             'request for its report)' % MAX_CYCLES)
    parser.add_argument(
        '--backend', choices=(SERVER,) + backends.NAMES, default=SERVER,
        help='server (default): placement under gunicorn on 127.0.0.1 over '
             'real HTTP; real/double: in-process; remote: --config-file')
    parser.add_argument('--database', choices=('postgresql', 'mariadb',
                                               'galera', 'sqlite'),
                        help='database of --backend server (default '
                             'postgresql: a throwaway cluster on '
                             '127.0.0.1:5433, installed if needed; mariadb: '
                             'a private MariaDB server on 127.0.0.1, '
                             'installed if needed, stopped at the end; '
                             'galera: three MariaDB Galera nodes, a '
                             'placement server on each; '
                             'sqlite: a file in a temporary directory)')
    parser.add_argument(
        '--db-url', metavar='URL',
        help='use this existing database for --backend server instead, '
             'as a SQLAlchemy URL (postgresql+psycopg2://user:password@host'
             '/name, mysql+pymysql://user:password@host/name or '
             'sqlite:////path); placement-manage db sync migrates '
             'it, and it is left in place. Placement makes one '
             'connection attempt of at most %d s (the URL\'s '
             'connect_timeout if it sets one): a database that refuses or '
             'cannot be reached fails the run within seconds. The '
             'password is never shown (***)' % DB_CONNECT_TIMEOUT)
    parser.add_argument(
        '--galera-writer', choices=('multi', 'single'),
        help='with --database galera: multi (default) sends each request '
             'to the next node\'s placement server, so that every node is '
             'written through; single sends them all to the first')
    parser.add_argument(
        '--galera-fault', choices=('kill', 'pause', 'node-death',
                                   'server-death', 'disk-full'),
        metavar='FAULT',
        help='with --database galera, 2 s into each ordering\'s run: '
             'kill (SIGKILL) the last node and start it again 5 s later; '
             'or pause (SIGSTOP) it for 35 s, longer than the placement '
             'client\'s timeout. Done from outside, the run not told: '
             'node-death kills the last node for good; server-death kills '
             'its placement server (gunicorn master); disk-full fills its '
             'disk (a small file system of its own: needs root) for 20 s')
    parser.add_argument(
        '--keep-database', action='store_true',
        help='with --database postgresql (the default): leave the '
             'PostgreSQL cluster running if this command started it, and '
             'say how to stop it (by default the command stops what it '
             'started; a cluster running before it stays running; MariaDB '
             'and Galera servers are the run\'s own and always stopped)')
    parser.add_argument(
        '--postgresql-port', type=_port, metavar='PORT',
        help='with --database postgresql: the port of the cluster on '
             '127.0.0.1 (default: 5433, or the first free one above it); '
             'a port given is used or refused (SHELVEFIX_PG_PORT)')
    parser.add_argument(
        '--postgresql-data', metavar='DIR',
        help='with --database postgresql: the cluster\'s data directory '
             '(default %s; SHELVEFIX_PG_DATA)' % DEFAULT_PG_DATA)
    parser.add_argument('--server-workers', type=int, metavar='N',
                        help='gunicorn worker processes of --backend server '
                             '(default %d; at most %d per CPU this process '
                             'may use; with --database galera, on each '
                             'node)' % (DEFAULT_SERVER_WORKERS,
                                        SERVER_WORKERS_PER_CPU))
    common.add_config_file_argument(parser)
    parser.add_argument('--ordering', choices=race.ORDERINGS,
                        action='append',
                        help='only this ordering (default: both)')
    common.add_free_argument(parser, 'delete, as nova does today')
    parser.add_argument('--poll-interval', type=common.finite_float,
                        default=0.005, metavar='SECONDS',
                        help="the API client's status polling interval "
                             '(default 0.005; more than 0, at most %g: a '
                             'cycle waits 30 s for the offload)'
                             % MAX_POLL_INTERVAL)
    parser.add_argument(
        '--compute-latency', type=common.finite_float, default=0.0,
        metavar='MS',
        help="optional knob: delay each of compute's placement requests "
             'by this many milliseconds, as a compute host far from '
             'placement would, in both orderings (default 0: nothing is '
             'widened artificially; at most %g, so that an offload ends '
             "within the client's 30 s wait)" % MAX_COMPUTE_LATENCY_MS)
    parser.add_argument('--seed', type=int, default=0,
                        help='seed of the servers\' random start delays '
                             '(default 0); the operating system still '
                             'schedules the threads, so counts vary')
    common.add_json_argument(parser)
    common.add_progress_argument(parser)


def _port(text):
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError('%r is not a port number (1 to '
                                         '65535)' % text)
    return port


def postgresql_environment(args):
    """The variables the cluster script reads, as the options set them."""
    env = {}
    if args.postgresql_port is not None:
        env['SHELVEFIX_PG_PORT'] = str(args.postgresql_port)
    if args.postgresql_data is not None:
        env['SHELVEFIX_PG_DATA'] = os.path.abspath(args.postgresql_data)
    return env


def _validate(args):
    for option, given in (('--galera-writer', args.galera_writer),
                          ('--galera-fault', args.galera_fault)):
        if given and args.database != 'galera':
            return '%s applies to --database galera only' % option
    # The project's own PostgreSQL cluster is the run's database.
    own_cluster = (args.database in (None, 'postgresql') and
                   not args.db_url and args.backend == SERVER)
    for option, given in (('--postgresql-port', args.postgresql_port),
                          ('--postgresql-data', args.postgresql_data)):
        if given is not None and not own_cluster:
            return ('%s applies to --database postgresql only (the '
                    'default of --backend server)' % option)
    if args.keep_database and not own_cluster:
        return ('--keep-database applies to --database postgresql only: '
                'the other databases are the run\'s own, and --db-url\'s '
                'is yours')
    server_options = (('--database', args.database),
                      ('--db-url', args.db_url),
                      ('--server-workers', args.server_workers))
    if args.backend != SERVER:
        for option, given in server_options:
            if given is not None:
                return ('%s applies to --backend server only, not to '
                        '--backend %s' % (option, args.backend))
    elif args.config_file:
        return ('--config-file applies to --backend remote, real or '
                'double: --backend server writes the configuration of the '
                'placement it starts')
    if args.db_url and args.database:
        return '--db-url and --database exclude each other: give one'
    for name in ('servers', 'cycles', 'server_workers'):
        value = getattr(args, name)
        if value is not None and value < 1:
            return '--%s must be at least 1' % name.replace('_', '-')
    if args.servers > MAX_SERVERS:
        return ('--servers %d: at most %d (each server is a thread of this '
                'process, and every cycle starts another)'
                % (args.servers, MAX_SERVERS))
    if args.servers * args.cycles > MAX_CYCLES:
        return ('--servers %d x --cycles %d: %d cycles per ordering, at '
                'most %d (the run keeps a record of every placement '
                'request, about 4 KB a cycle, for its report)'
                % (args.servers, args.cycles, args.servers * args.cycles,
                   MAX_CYCLES))
    if args.server_workers is not None:
        from shelvefix.explorer import parallel
        cpus = parallel.available_cpus()
        most = SERVER_WORKERS_PER_CPU * cpus
        if args.server_workers > most:
            return ('--server-workers %d: at most %d (%d per CPU, and this '
                    'process may use %d CPU(s))'
                    % (args.server_workers, most, SERVER_WORKERS_PER_CPU,
                       cpus))
    # finite_float has refused nan and inf already.
    if args.poll_interval <= 0:
        return '--poll-interval must be positive'
    if args.poll_interval > MAX_POLL_INTERVAL:
        return ('--poll-interval %g: at most %g s (a cycle waits 30 s for '
                'the offload)' % (args.poll_interval, MAX_POLL_INTERVAL))
    if args.compute_latency < 0:
        return '--compute-latency cannot be negative'
    if args.compute_latency > MAX_COMPUTE_LATENCY_MS:
        return ('--compute-latency %g: at most %g ms (an offload must end '
                "within the client's 30 s wait)"
                % (args.compute_latency, MAX_COMPUTE_LATENCY_MS))
    return None


def run(args, out, err):
    """Run the command; returns the exit status.

    :raises CommandError: for what the user can fix
    """
    problem = _validate(args)
    if problem:
        raise common.CommandError(problem)
    if args.backend == SERVER:
        return _run_on_server(args, out, err)
    placement = common.make_backend(args.backend, args.config_file)
    with placement:
        return stress_run.run(args, placement,
                              backends.DESCRIPTIONS[args.backend], out, err)


def _check_db_url(url):
    from sqlalchemy.engine import url as sa_url

    from shelvefix.backends import database
    try:
        dialect = sa_url.make_url(url).get_backend_name()
    except Exception as e:
        # Its password masked, as everywhere the URL is shown.
        raise common.CommandError('--db-url %r is not a SQLAlchemy URL: %s'
                                  % (database.mask_url(url),
                                     database.scrub(str(e), url))) from e
    if dialect not in ('postgresql', 'sqlite', 'mysql'):
        raise common.CommandError(
            '--db-url: placement runs on postgresql, mysql or sqlite, not '
            '%s' % dialect)


def _run_on_server(args, out, err):
    import fixtures

    from shelvefix.backends import server
    if args.db_url:
        _check_db_url(args.db_url)
    # A server that does not start fails here, with its reason (see
    # common.problem).
    workers = args.server_workers or DEFAULT_SERVER_WORKERS
    if args.database == 'galera':
        return _run_on_galera(args, workers, out, err)
    srv = server.PlacementServer(database=args.database or 'postgresql',
                                 workers=workers, db_url=args.db_url,
                                 stop_cluster=not args.keep_database)
    try:
        with contextlib.ExitStack() as stack:
            # The cluster script reads them; so do the processes it starts.
            for name, value in postgresql_environment(args).items():
                stack.enter_context(fixtures.EnvironmentVariable(name,
                                                                 value))
            stack.enter_context(srv)
            # The server writes the [placement] file a --config-file user
            # would pass; reading it exercises the same path as --backend
            # remote.
            with common.make_backend(backends.REMOTE,
                                     [srv.shelvefix_config]) as placement:
                where = ('placement under gunicorn (%d workers) on %s, %s'
                         % (workers, srv.url, srv.database))
                return stress_run.run(args, placement, where, out, err,
                                      database=srv)
    finally:
        _report_cluster(srv.cluster, err)


def _report_cluster(cluster, err):
    """Say what became of the PostgreSQL cluster the command started."""
    if cluster is None or not getattr(cluster, 'started', False):
        return
    if cluster.outcome == 'stopped':
        err.write('shelvefix stress: stopped the PostgreSQL cluster it had '
                  'started\n')
    elif cluster.outcome == 'in use':
        err.write('shelvefix stress: the PostgreSQL cluster it started is '
                  'still in use; its last user stops it\n')
    elif cluster.outcome == 'left running':
        # The data directory the script must be told, if not its default.
        given = '' if cluster.data == DEFAULT_PG_DATA else (
            'SHELVEFIX_PG_DATA=%s ' % cluster.data)
        err.write('shelvefix stress: the PostgreSQL cluster it started is '
                  'left running (--keep-database); stop it with: %sbash %s '
                  'stop\n' % (given, cluster.script))
    else:
        err.write('shelvefix stress: the PostgreSQL cluster it started may '
                  'still run: %s\n' % common.one_line(str(cluster.outcome)))


def _run_on_galera(args, workers, out, err):
    from shelvefix.backends import galera
    from shelvefix.backends import loadbalancer
    writers = args.galera_writer or loadbalancer.MULTI
    with galera.GaleraPlacement(
            workers=workers,
            small_disk=args.galera_fault == 'disk-full') as cluster:
        with common.make_backend(backends.REMOTE,
                                 [cluster.shelvefix_config]) as placement:
            cluster.spread(placement, writers)
            where = ('placement under gunicorn (%d workers) on each of %d '
                     'Galera nodes (%s writer%s: %s), galera' % (
                         workers, len(cluster.urls), writers,
                         's' if writers == loadbalancer.MULTI else '',
                         ', '.join(cluster.urls)))
            return stress_run.run(args, placement, where, out, err,
                                  database=cluster)
