"""The process that runs the race lab's cells on nova's code.

``shelvefix race --target nova`` starts it (``python -m
shelvefix.nova.runner``) through :class:`shelvefix.nova.lab.NovaLab`,
which speaks to it in frames (:mod:`shelvefix.nova.lab`): it loads the
nova named (:func:`shelvefix.nova.tree.load`) and says so, or says why
not; then for each request it explores a cell, or makes random runs of
it, and sends back the condensed result, with progress frames on the
way. nova's exceptions and objects travel as their class names and text
(:func:`shelvefix.explorer.pickling.dumps`), so that the command's
process never imports nova.
"""

import logging
import os
import sys
import warnings

import fixtures

from shelvefix import nova as nova_target
from shelvefix.nova import lab
from shelvefix.nova import tree


def _quiet():
    """nova's code logs and warns in every run: keep the frames readable."""
    logging.getLogger().addHandler(logging.NullHandler())
    logging.getLogger().setLevel(logging.CRITICAL + 1)
    warnings.simplefilter('ignore')


#: nova's process-wide thread pools, by release: ``(module, function)``
#: that shuts one down so that the next use makes it anew.
EXECUTOR_RESETS = (('nova.thread_pool_factory', 'reset_all_executors'),
                   ('nova.utils', 'destroy_scatter_gather_executor'),
                   ('nova.utils', 'destroy_default_executor'),
                   ('nova.utils', 'destroy_cache_images_executor'),
                   ('nova.utils', 'destroy_long_task_executor'))


def reset_executors():
    """Shut nova's thread pools down before a fork, as nova does.

    A pool's threads do not survive ``fork``: a worker of the explorer
    (``--workers``) would hand work to threads that are not there and
    wait for ever. nova's own services reset them before forking theirs;
    the next use in either process makes a new pool.
    """
    for module_name, function in EXECUTOR_RESETS:
        module = sys.modules.get(module_name)
        reset = getattr(module, function, None)
        if reset is not None:
            reset()


def _ahead(cluster, clients):
    """The search's subtree tasks on the Dask scheduler named, if any."""
    if cluster is None:
        return None
    from shelvefix.cluster import ahead
    from shelvefix.cluster import engine
    address, job, width = cluster
    if address not in clients:
        clients[address] = engine.connect(address)
    return ahead.ClusterAhead.factory(clients[address], job, width)


def _close(kept):
    """Close the program kept for subtree tasks, if there is one.

    nova's programs set up process-wide state (its configuration, its
    database): two must never be open at once in a runner.
    """
    while kept:
        kept.popitem()[1].close()


def _serve(channel, backend):
    """Answer the command's requests until it says QUIT or goes."""
    kept, clients = {}, {}
    try:
        _answer(channel, backend, kept, clients)
    finally:
        _close(kept)
        for client in clients.values():
            client.close()


def _answer(channel, backend, kept, clients):
    from shelvefix.cluster import tasks
    from shelvefix.nova import target
    from shelvefix.race import random_runs
    from shelvefix.race import report
    from shelvefix.race import scenarios
    while True:
        request = channel.receive()
        if request[0] == lab.QUIT:
            return
        kind, name, cell, options = request
        scenario = scenarios.get_scenario(name)

        def progress(done):
            channel.send((lab.PROGRESS, done))
        without = options.get('without', ())
        try:
            if kind == lab.SUBTREE:
                # A subtree task's program serves the exploration's next
                # tasks too: kept until another program is made.
                if (name, cell, without) not in kept:
                    _close(kept)
                    kept[name, cell, without] = target.program(
                        backend, scenario, cell, without)
                prog = kept[name, cell, without]
            else:
                _close(kept)
                prog = target.program(backend, scenario, cell, without)
        except nova_target.NovaUnusable as e:
            channel.send((lab.UNUSABLE, str(e)))
            continue
        if kind == lab.SUBTREE:
            result = tasks.search_subtree(
                prog, options['payload'], options['reduce'],
                options['step_timeout'], options['budget'])
        elif kind == lab.EXPLORE:
            exploration = scenarios.explore(
                prog, reduce=options['reduce'], progress=progress,
                workers=options['workers'],
                stop_at=options.get('stop_at', ()),
                ahead=_ahead(options.get('cluster'), clients))
            result = report.summarise(cell, exploration)
        else:
            result = random_runs.run_random(prog, cell, options['runs'],
                                            options['seed'],
                                            progress=progress)
        channel.send((lab.RESULT, result))


def main():
    """Load the nova named in the first frame, then serve requests."""
    channel = lab.Channel(os.fdopen(0, 'rb'), os.fdopen(1, 'wb'))
    # Nothing but frames on the channel's stdout.
    sys.stdout = sys.stderr
    _quiet()
    path, backend, scratch = channel.receive()
    try:
        description = tree.load(path, scratch)
    except nova_target.NovaUnusable as e:
        channel.send((lab.UNUSABLE, str(e)))
        return 0
    channel.send((lab.LOADED, description))
    os.register_at_fork(before=reset_executors)
    try:
        _serve(channel, backend)
    except EOFError:
        pass
    except Exception as e:
        # A fixture's set-up reports its errors as one MultipleExceptions.
        while isinstance(e, fixtures.MultipleExceptions):
            e = e.args[0][1]
        channel.send((lab.FAILED, '%s: %s' % (type(e).__name__, e)))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
