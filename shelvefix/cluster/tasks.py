"""What a Dask worker runs: explorations and subtrees, named.

A task carries a :class:`Job`: the scenario, the cell, the target, the
placement backend and, for nova, the tree (a path or a wheel the worker
can read: the installed nova when None) and the corpus row whose patch to
put back. The worker builds what the job names itself, once per process:

* the library target's placement (the double or the embedded real
  service, in the worker's process; ``remote`` from the configuration
  files named, which the worker must be able to read), shared by its
  programs, one alive at a time as in one process;
* the nova target's :class:`~shelvefix.nova.lab.NovaLab`, a runner
  process of the worker's own for each tree (a patched copy made in the
  worker's scratch directory for a corpus row).

Tasks of one worker process take turns (:data:`_TURN`): a program and
its placement are used by one search at a time.
"""

import atexit
import collections
import logging
import os
import pickle
import shutil
import tempfile
import threading
import time

from shelvefix.explorer import subtrees
from shelvefix.explorer import threads
from shelvefix import race

#: One task at a time per worker process.
_TURN = threading.RLock()

#: What a worker process has built, by what it was built for.
_BUILT = {}

#: How many nova runners (one per tree) a worker process keeps.
RUNNERS = 4

_RUNNERS = collections.OrderedDict()


class Job(collections.namedtuple('Job', [
        'target', 'scenario', 'cell', 'backend', 'nova', 'patch', 'without',
        'config_files'], defaults=(None, None, (), ()))):
    """One exploration, by name: what a worker needs to build it.

    :ivar target: ``library`` or ``nova``
    :ivar scenario: the scenario's name
    :ivar cell: the :class:`~shelvefix.race.scenarios.Cell`
    :ivar backend: the placement backend's name
    :ivar nova: the nova tree or wheel (None: the installed nova)
    :ivar patch: the corpus row (bug) whose patch the tree gets, or None
    :ivar without: actors of the scenario left out (nova)
    :ivar config_files: oslo.config files for the backend (library)
    """

    __slots__ = ()

    @property
    def key(self):
        """A name for the job's tasks, readable on a dashboard."""
        parts = [self.target, self.scenario, self.cell.variant]
        parts += [part for part in (self.cell.free, self.cell.fault,
                                    self.patch and 'bug%s' % self.patch)
                  if part]
        return '-'.join(str(part) for part in parts)


class Timed(collections.namedtuple('Timed', [
        'value', 'started', 'ended', 'worker'])):
    """A task's value, when it ran (``time.time()``) and on which worker."""

    __slots__ = ()


def timed(function, *args):
    """Run ``function(*args)`` on a worker; a :class:`Timed`."""
    _cached(('quiet',), _quiet)
    started = time.time()
    value = function(*args)
    try:
        from distributed import get_worker
        worker = get_worker().address
    except (ImportError, ValueError):
        worker = None
    return Timed(value, started, time.time(), worker)


def _quiet():
    """The library's logs go nowhere in a worker, as in the command."""
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.NullHandler())


def _cached(key, build):
    if key not in _BUILT:
        _BUILT[key] = build()
    return _BUILT[key]


def _program(job):
    """The library program of the job's subtree tasks, one at a time.

    A program's providers are in the worker's placement for as long as it
    lives, where another program's runs would see them (among the
    candidates the scheduler is offered, for one): so, as in one process,
    a worker keeps one program alive, and closes it before it makes
    another (:func:`_close_program`).
    """
    held = _BUILT.get('program')
    if held is not None and held[0] == job:
        return held[1]
    _close_program()
    from shelvefix.race import scenarios
    from shelvefix.race import targets
    prog = targets.program(_placement(job),
                           scenarios.get_scenario(job.scenario), job.cell)
    _BUILT['program'] = (job, prog)
    return prog


def _close_program():
    """Close the subtree tasks' program, if the worker keeps one."""
    held = _BUILT.pop('program', None)
    if held is not None:
        held[1].close()


def _placement(job):
    """The worker's placement fixture for the library target, set up."""
    def build():
        from shelvefix import backends
        from shelvefix.cmd import common
        placement = backends.make_backend(
            job.backend, common.load_conf(list(job.config_files)))
        placement.setUp()
        atexit.register(placement.cleanUp)
        return placement
    return _cached(('placement', job.backend, job.config_files), build)


def _scratch():
    def build():
        path = tempfile.mkdtemp(prefix='shelvefix-worker-')
        atexit.register(shutil.rmtree, path, True)
        return path
    return _cached(('scratch',), build)


def _nova_path(job):
    """The tree the job names, with its row's patch if it has one."""
    if job.patch is None:
        return job.nova

    def build():
        from shelvefix import corpus
        from shelvefix.corpus import trees
        row, = corpus.select(corpus.load(), bugs=(job.patch,))
        scratch = tempfile.mkdtemp(dir=_scratch())
        root, version = trees.source(job.nova, scratch)
        return trees.patched(root, version, row.patch_path,
                             os.path.join(scratch, 'nova-%s' % job.patch))
    return _cached(('tree', job.nova, job.patch), build)


def _nova_lab(job):
    """The worker's runner of the job's nova tree, started once.

    A worker keeps the runners of its :data:`RUNNERS` latest trees (a
    corpus has a patched tree per row): an older one is stopped.
    """
    key = (job.nova, job.patch, job.backend)
    if key in _RUNNERS:
        _RUNNERS.move_to_end(key)
        return _RUNNERS[key]
    from shelvefix.nova import lab
    while len(_RUNNERS) >= RUNNERS:
        _stop(_RUNNERS.popitem(last=False)[1])
    runner = lab.NovaLab(_nova_path(job), job.backend)
    runner.__enter__()
    _RUNNERS[key] = runner
    return runner


def _stop(runner):
    """Stop a runner: terminated, not waited for.

    One may still be searching: a task the scheduler cancelled.
    """
    runner.__exit__(SystemExit, None, None)


@atexit.register
def _stop_all():
    """The worker is closing: stop every runner."""
    while _RUNNERS:
        _stop(_RUNNERS.popitem()[1])


def _client():
    """The worker's client of its scheduler, and the cluster's width."""
    from distributed import get_client
    client = get_client()
    return client, sum(client.nthreads().values())


def describe(job):
    """What nova the job's tree is, as the worker loaded it."""
    with _TURN:
        return _nova_lab(job).description


def explore(job, reduce=True, stop_at=(), ahead=True):
    """A whole exploration; its :class:`~.report.CellResult`.

    Its subtrees are tasks too, unless ``ahead`` is False.
    """
    from shelvefix.race import scenarios
    scenario = scenarios.get_scenario(job.scenario)
    with _TURN:
        client, width = _client() if ahead else (None, 0)
        if job.target == race.NOVA:
            cluster = ((client.scheduler.address, job, width)
                       if ahead else None)
            return _nova_lab(job).explore(
                scenario, job.cell, reduce=reduce, stop_at=stop_at,
                without=job.without, cluster=cluster)
        from shelvefix.cluster import ahead as ahead_mod
        from shelvefix.race import report
        from shelvefix.race import targets
        # Its program alone on the worker's placement.
        _close_program()
        prog = targets.program(_placement(job), scenario, job.cell)
        exploration = scenarios.explore(
            prog, reduce=reduce, stop_at=stop_at,
            ahead=ahead_mod.ClusterAhead.factory(client, job, width)
            if ahead else None)
        return report.summarise(job.cell, exploration)


def subtree(job, payload, reduce, step_timeout, budget):
    """One subtree task: its runs (pickled) and the stack to go on from."""
    with _TURN:
        if job.target == race.NOVA:
            return _nova_lab(job).subtree(job, payload, reduce,
                                          step_timeout, budget)
        return search_subtree(_program(job), payload, reduce,
                              step_timeout, budget)


def search_subtree(program, payload, reduce, step_timeout, budget):
    """Search the pickled stack ``payload`` for ``budget`` seconds at most.

    :returns: ``(runs, rest)``: each run as
        :func:`~shelvefix.explorer.pickling.portable` pickles it (an
        :class:`~shelvefix.explorer.model.ExplorationError` last if the
        program failed), and the pickled stack to go on from, or None once
        the subtree is over
    """
    from shelvefix.explorer import model
    from shelvefix.explorer import pickling
    started = time.monotonic()
    pool = threads.ActorThreads()
    runs, rest = [], None
    try:
        for key, observed, rest in subtrees.subtree_runs(
                program, pickle.loads(payload), reduce, step_timeout, pool):
            if isinstance(observed, model.ExplorationError):
                runs.append(pickle.dumps((key, observed)))
                rest = None
                break
            runs.append(pickling.portable(key, observed))
            if rest is None or time.monotonic() - started >= budget:
                break
    finally:
        pool.close()
    return runs, (pickle.dumps(rest, protocol=pickle.HIGHEST_PROTOCOL)
                  if rest is not None else None)
