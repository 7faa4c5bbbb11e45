"""A fingerprint of an exploration: equal where two made the same runs.

The cluster's explorations are compared with one process's through it
(the tests, the benchmarks): the same runs, in the same order, each step
seeing the same thing, with the same outcome.
"""

import hashlib
import re


#: What differs from one process to another in a step and says nothing of
#: the run: uuids (made afresh for each program), the suffixes that make
#: names unique (``node-1-d7548246``: a uuid's first eight digits) and
#: objects' addresses.
_VOLATILE = re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                       r'[0-9a-f]{12}|(?<=-)[0-9a-f]{8}\b|0x[0-9a-f]+')


def digest(exploration):
    """A hash of every run, in order: what two equal explorations share.

    Each run's schedule, the label and result of each of its steps (what
    the actor saw: a status, a row, the candidates placement offered;
    uuids and addresses left out) and its outcome.
    """
    hashed = hashlib.sha256()
    for run in exploration.runs:
        steps = [_VOLATILE.sub('#', '%s -> %s' % (entry.step.label,
                                                  entry.result))
                 for entry in run.trace]
        hashed.update(repr((run.schedule, steps, run.outcome)).encode(
            'utf-8'))
    return hashed.hexdigest()
