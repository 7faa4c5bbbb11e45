"""A second move right after a resize is confirmed, on nova's own code.

The library's ``resize-migrate`` (``shelvefix race --scenario
resize-migrate``) on nova's latest release (see
:mod:`shelvefix.nova.second_move` for what runs and what is
stubbed): a client migrates the server back to compute-1 as soon as it
reads it ``ACTIVE``, which compute-1's ``confirm_resize`` saves before its
clean-up is done. What it finds:

* **the second move's stashed flavor wiped** (a finding of nova's code).
  The confirm's last step, ``_delete_stashed_flavor_info``, clears the
  server's ``old_flavor`` and ``new_flavor`` (and ``old_vm_state``) and
  saves them, after it deleted the migration's allocations; the second
  move's ``prep_resize`` on compute-1, which takes no lock the confirm
  holds, stashes its own ``new_flavor`` before that save. Then
  compute-1's ``finish_resize`` reads no new flavor and crashes
  (``AttributeError``): the server is ``ERROR`` on compute-1, and the
  second migration ``error``. Placement stays consistent: the failed
  finish frees what the migration held on compute-2.

The library keeps a move's flavors on its migration, so it has no stash
to wipe: its ``resize-migrate`` cells show nothing.
"""

import os

import testtools

from shelvefix.race import move_outcomes
from shelvefix.race import outcomes
from shelvefix.tests.nova import base
from shelvefix.tests.nova import test_moves

CRASH = 'compute-1 later error: AttributeError'
STALE = move_outcomes.SCHEDULER_INFO_STALE


def last(run, actor, label):
    """Where ``actor`` last took a step ``label``, or None."""
    found = None
    for index, entry in enumerate(run.trace):
        if (entry.step.actor, entry.step.label) == (actor, label):
            found = index
    return found


class SecondMoveTestBase(test_moves.MoveTestCase):

    def setUp(self):
        super(SecondMoveTestBase, self).setUp()
        self.second_move = base.load('shelvefix.nova.second_move')

    def explore_second(self, without=('periodic-1',)):
        return self.explore(self.program.RESIZE_MIGRATE, without=without,
                            cloud_cls=self.second_move.SecondMoveCloud)


class SecondMoveTestCase(SecondMoveTestBase):
    """Without compute-1's audit (11 runs)."""

    def test_the_confirm_wipes_the_second_moves_flavor(self):
        exploration = self.explore_second()
        self.assertOnly({outcomes.OK, CRASH, STALE}, exploration)
        wiped = 0
        for run, end in zip(exploration.runs, self.ends):
            stashed = test_moves.position(run, 'compute-1-prep',
                                          'save instance')
            cleared = last(run, 'compute-1', 'save instance')
            self.assertIsNotNone(stashed, run.format_trace())
            if cleared > stashed:
                wiped += 1
                # Nor did compute-1 tell the scheduler the server is back
                # there: compute-2 still has it.
                self.assertEqual((CRASH, STALE), run.outcome,
                                 run.format_trace())
                # finish_resize: no new flavor to set.
                self.assertEqual(
                    {'instance': ('error', None, 'compute-1'),
                     'migration': 'confirmed', 'held': ['compute-1'],
                     'migration_held': [], 'second': 'error',
                     'second_held': [], 'later': [
                         "compute-1: 'NoneType' object has no attribute "
                         "'id'"]}, end)
            else:
                self.assertEqual((outcomes.OK,), run.outcome,
                                 run.format_trace())
                self.assertEqual(
                    {'instance': ('resized', None, 'compute-1'),
                     'migration': 'confirmed', 'held': ['compute-1'],
                     'migration_held': [], 'second': 'finished',
                     'second_held': ['compute-2'], 'later': []}, end)
        self.assertGreater(wiped, 0)
        self.assertLess(wiped, len(exploration.runs))

    def test_the_client_waits_for_the_confirm(self):
        # The second move starts only once the server reads ACTIVE: the
        # confirm saved it so before deleting the allocations.
        exploration = self.explore_second()
        for run in exploration.runs:
            waited = test_moves.position(run, 'migrate', 'wait')
            active = test_moves.position(
                run, 'compute-1', 'save instance',
                'vm_state=active task_state=None host=compute-2')
            freed = test_moves.position(
                run, 'compute-1', 'PUT /allocations/{migration} (empty) '
                'gen=1')
            self.assertTrue(active < waited, run.format_trace())
            self.assertIsNotNone(freed)


@testtools.skipUnless(os.environ.get(test_moves.FULL),
                      'a minute of nova code: set %s=1' % test_moves.FULL)
class FullSecondMoveTestCase(SecondMoveTestBase):
    """With compute-1's audit too (409 runs, about a minute).

    ``SHELVEFIX_NOVA_FULL=1 tox -e nova -- test_second_move``. The audit
    adds runs, not outcomes.
    """

    def test_the_audit_adds_nothing(self):
        exploration = self.explore_second(without=())
        self.assertOnly({outcomes.OK, CRASH, STALE}, exploration)
        part = self.explore_second()
        self.assertGreater(len(exploration.runs), len(part.runs))
