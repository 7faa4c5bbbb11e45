"""``shelvefix ghosts``: ghost consumers in a real placement database.

Lists the consumers that hold no allocation (read-only), and with
``--heal`` removes those that are still ghosts inside the transaction
that removes them (:mod:`shelvefix.backends.ghosts`). For operators of a
deployment that ran a placement without the fix: it reads the database
of any release as it is, with no upgrade and no placement installed.
"""

import argparse

from shelvefix.backends import database
from shelvefix.backends import ghosts
from shelvefix.cmd import common
from shelvefix import utils

HELP = 'list (and with --heal remove) ghost consumers in a placement database'
DESCRIPTION = (
    'A ghost consumer is a row of placement\'s consumers table that no '
    'allocation names: a DELETE /allocations whose second transaction '
    'failed (a deadlock, a lost connection, a failover) leaves one, and '
    'every later claim for that consumer sent with consumer_generation null '
    'then fails with a 409 consumer generation conflict (nova: an unshelve '
    'or a migration fails with AllocationUpdateFailed).',
    'By default the command only reads: it lists each ghost (consumer '
    'uuid, project, user, generation, created and updated times, UTC) and '
    'a summary line. --db-url is the SQLAlchemy URL of placement\'s '
    'database, as in placement.conf\'s [placement_database] connection, '
    'e.g. mysql+pymysql://placement:PASSWORD@db/placement; its password is '
    'never shown.',
    'With --heal it then removes the ghosts it listed, --batch-size per '
    'transaction, each with a DELETE that checks again inside that '
    'transaction that the consumer still has no allocation, still has the '
    'generation listed, and was last written more than --min-age seconds '
    'ago: a consumer that gained allocations meanwhile, or that a request '
    'is writing, is never removed. It says how many it removed and how '
    'many it kept, and why.',
    'Verdict: 0 if there is no ghost (with --heal: none is left, every '
    'ghost listed was removed or is a ghost no more), 1 if there are '
    'ghosts (with --heal: some were kept, too young or written '
    'meanwhile; run it again later). A URL that cannot be parsed, a '
    'database that cannot be reached, or one without placement\'s tables '
    'is bad input.',
)

MAX_BATCH_SIZE = 10000


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError('%r is not a whole number' % text)
    if not 1 <= value <= MAX_BATCH_SIZE:
        raise argparse.ArgumentTypeError(
            '%d is not between 1 and %d' % (value, MAX_BATCH_SIZE))
    return value


def _seconds(text):
    value = common.finite_float(text)
    if value < 0:
        raise argparse.ArgumentTypeError('%r is negative' % text)
    return value


def add_arguments(parser):
    """Add the command's options to its subparser."""
    parser.add_argument(
        '--db-url', required=True, metavar='URL',
        help='SQLAlchemy URL of placement\'s database (postgresql+psycopg2:'
             '//..., mysql+pymysql://..., sqlite:///PATH); read-only '
             'unless --heal')
    parser.add_argument(
        '--heal', action='store_true',
        help='remove the ghosts listed that are still without allocations, '
             'unchanged and older than --min-age, inside the transaction '
             'that removes them')
    parser.add_argument(
        '--min-age', type=_seconds, default=ghosts.DEFAULT_MIN_AGE,
        metavar='SECONDS',
        help='with --heal, keep a ghost written less than this long ago: '
             'PUT /allocations creates a new consumer a moment before it '
             'writes its allocations, in a transaction of its own, so a '
             'young consumer without allocations may be a claim in '
             'progress; measured with this machine\'s clock, keep it well '
             'above its skew from placement\'s hosts (default: %d)'
             % ghosts.DEFAULT_MIN_AGE)
    parser.add_argument(
        '--batch-size', type=_positive_int,
        default=ghosts.DEFAULT_BATCH_SIZE, metavar='N',
        help='with --heal, consumers removed per transaction (default: %d)'
             % ghosts.DEFAULT_BATCH_SIZE)


def _time(value):
    return value.isoformat(sep=' ', timespec='seconds') if value else '-'


def _line(ghost):
    return ('%s  project %s  user %s  generation %s  created %s  updated %s'
            % (ghost.uuid, ghost.project or '-', ghost.user or '-',
               ghost.generation, _time(ghost.created_at),
               _time(ghost.updated_at)))


def run(args, out, err):
    """Run the command; returns the exit status."""
    shown = database.mask_url(args.db_url)
    try:
        engine = ghosts.connect(args.db_url)
    except ghosts.GhostsError as e:
        raise common.CommandError(str(e)) from e
    try:
        return _run(args, engine, shown, out)
    finally:
        engine.dispose()


def _run(args, engine, shown, out):
    try:
        found = ghosts.find(engine)
    except ghosts.GhostsError as e:
        raise common.CommandError('%s: %s' % (shown, e)) from e
    for ghost in found:
        out.write(_line(ghost) + '\n')
    if not found:
        out.write('No ghost consumer (a consumer without allocations) in '
                  '%s.\n' % shown)
        return 0
    out.write('%s (consumers without allocations) in %s.\n'
              % (utils.plural(len(found), 'ghost consumer'), shown))
    if not args.heal:
        return 1
    try:
        healed = ghosts.heal(engine, found, min_age=args.min_age,
                             batch_size=args.batch_size)
    except ghosts.GhostsError as e:
        raise common.CommandError('%s: %s' % (shown, e)) from e
    kept = [(healed.gained_allocations, 'gained allocations'),
            (healed.too_young, 'written less than %g s ago (--min-age)'
             % args.min_age),
            (healed.changed, 'written since they were listed, still '
             'without allocations')]
    for uuids, why in kept:
        for uuid in uuids:
            out.write('kept %s: %s\n' % (uuid, why))
    out.write('Removed %d of %d; kept %d that gained allocations, %d too '
              'young (--min-age %g s), %d written meanwhile; %d already '
              'gone.\n' % (len(healed.removed), len(found),
                           len(healed.gained_allocations),
                           len(healed.too_young), args.min_age,
                           len(healed.changed), len(healed.gone)))
    return 1 if healed.too_young or healed.changed else 0
