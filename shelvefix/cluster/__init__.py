"""Exploring on a Dask cluster: the same answers as one process, sooner.

Two levels of work go to one engine, `Dask distributed
<https://distributed.dask.org>`_:

explorations (:mod:`shelvefix.cluster.tasks`)
    each cell of ``shelvefix race`` and each exploration of ``shelvefix
    corpus`` is a task; it names its scenario, cell, target, backend and
    nova tree (a :class:`~shelvefix.cluster.tasks.Job`), and the worker
    builds the program itself: nothing is copied from the command's
    memory;
subtrees (:mod:`shelvefix.cluster.subtrees`)
    inside an exploration, the branches still pending far ahead of the
    search are tasks too, searched depth first by a worker as the forked
    workers of :mod:`shelvefix.explorer.parallel` search them; the search
    checks every run it takes against its own stack, so that the
    exploration makes the same runs in the same order with the same result.

``--cluster`` chooses where (:func:`parse`): ``local`` (the default: this
process, and forked workers with ``--workers``; no engine needed),
``local:N`` (a Dask cluster of N worker processes on 127.0.0.1, started
and stopped by the command) or ``tcp://HOST:PORT`` (a Dask scheduler
already running, with its workers). The engine is an extra:
``pip install 'shelvefix[cluster]'``.
"""

import collections
import importlib.util
import re

#: The default: no cluster.
LOCAL = 'local'

#: The most worker processes ``local:N`` starts.
MAX_LOCAL_WORKERS = 64

INSTALL_HINT = ("--cluster %s needs Dask's distributed engine, which is not "
                "installed: pip install 'shelvefix[cluster]'")

_ADDRESS = re.compile(r'^tcp://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):'
                      r'([0-9]{1,5})$')


class Spec(collections.namedtuple('Spec', ['text', 'workers', 'address'])):
    """Where explorations run.

    ``workers`` is the number of worker processes of a ``local:N`` cluster
    (None otherwise), ``address`` the scheduler of ``tcp://HOST:PORT``
    (None otherwise); both None: this process (``local``).
    """

    __slots__ = ()

    @property
    def engine(self):
        """Whether the spec needs the engine (anything but ``local``)."""
        return self.workers is not None or self.address is not None


def parse(text):
    """Read a ``--cluster`` value.

    :returns: a :class:`Spec`
    :raises ValueError: with a line saying what is wrong
    """
    if text == LOCAL:
        return Spec(text, None, None)
    if text.startswith(LOCAL + ':'):
        count = text[len(LOCAL) + 1:]
        if not count.isdigit() or not 1 <= int(count) <= MAX_LOCAL_WORKERS:
            raise ValueError(
                '--cluster %s: local:N needs a number of worker processes '
                'from 1 to %d' % (text, MAX_LOCAL_WORKERS))
        return Spec(text, int(count), None)
    match = _ADDRESS.match(text)
    if match is None:
        raise ValueError(
            '--cluster %s: expected local, local:N (N worker processes on '
            'this machine) or tcp://HOST:PORT (a Dask scheduler)' % text)
    if not 1 <= int(match.group(2)) <= 65535:
        raise ValueError('--cluster %s: the port must be from 1 to 65535'
                         % text)
    return Spec(text, None, text)


def available():
    """Whether the engine (``distributed``) can be imported."""
    return importlib.util.find_spec('distributed') is not None
