"""The lab's own requests to placement, tried again when they fail.

What the code under test sends is never retried here: only the harness's
set-up, observations and clean-up, which must not end a run or leave
anything behind because placement failed once. A placement on a Galera
cluster written through every node fails some of them for a moment: a
node that has not yet applied another node's commit answers from before
it (a provider whose allocations were just freed "has allocations"), and
a node that left the cluster answers nothing until it is marked down.
"""

import time


def tried(call, attempts, delay, deadline=None):
    """What ``call()`` returns, tried up to ``attempts`` times.

    :param delay: seconds between two tries
    :param deadline: no try starts again after this ``time.monotonic()``
        (None: every try is made)
    :raises: the last try's error
    """
    error = None
    for attempt in range(attempts):
        if attempt:
            if deadline is not None and time.monotonic() + delay > deadline:
                break
            time.sleep(delay)
        try:
            return call()
        except Exception as e:
            error = e
    raise error
