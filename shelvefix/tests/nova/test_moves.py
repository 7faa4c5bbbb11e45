"""Resize confirm and revert, and evacuation, explored on nova's own code.

The explorer runs nova's services around a resized server, or one being
evacuated (see :mod:`shelvefix.nova.moves` and
:mod:`~shelvefix.nova.evacuation` for what runs and what is
stubbed), through every class of interleavings of their steps, and judges
each end state as the library's move lab does
(:mod:`shelvefix.nova.move_program`). What nova's latest release
shows:

* a confirm against compute-1's audit, also with compute-1's driver
  failing to clean up: no bad outcome;
* a revert against compute-2's audit: no bad outcome; against
  compute-1's: ``usage untracked``. compute-2 marks the migration
  ``reverted`` (``drop_move_claim_at_dest``) before compute-1 saves the
  server back on its host (``_revert_instance_flavor_host_node``, outside
  compute-1's tracker lock); an audit of compute-1 in between finds the
  server neither on the node nor migrating;
* an evacuation against the source's start-up: the start-up cleans up
  after the evacuation in flight, and its write of the server's
  allocations and the scheduler's claim race at one consumer generation.
  If the start-up writes first, the claim fails (``scheduler 409``) and
  the server, in ERROR, holds nothing (``claim wiped``); if the claim does,
  the start-up's write fails, is not retried, and the migration is saved
  ``completed`` anyway: compute-1's allocations stay with the server for
  good (``allocations leaked``), unless compute-2 saves the migration
  ``done`` after that; with the rebuild failing, the start-up can also
  free compute-1 under a server that failed to leave it;
* an evacuation against compute-2's audit: ``usage untracked``: the
  rebuild's end is saved before ``finish_evacuation`` saves the host, and
  the start-up can complete the migration while compute-2 rebuilds.

* the API deleting a resized server while its user confirms it: both
  confirms reach compute-1, and the second crashes on the migration
  context the first dropped (``AttributeError``; the server in ERROR, and
  when it is the delete's, not deleted).

The windows are those of doc/source/findings/moves.rst; the leak and the
crash show on nova's code alone (the library retries the write, and its
second confirm drops nothing). And each historical bug, on nova's code moved
back to its pre-fix shape by one rewrite
(:mod:`shelvefix.novacheck.move_rewrites`), shows its symptom: bug
1879878 (the status saved outside the tracker's lock) an audit that makes
the drop subtract the flavor twice, bug 1821594 (the free not in
``finally``) the migration's allocations leaked when the clean-up fails.

The scenarios with every actor take minutes of nova's code
(:class:`FullTestCase`, not run by default); they are explored in parts:
the revert once per audited node (with both audits its runs are exactly
the product of the two: the audits of two nodes write nothing the other
reads), the evacuation without the audit, without the start-up, and from
the conductor's cast (bounded there).
"""

import logging
import os

import fixtures
import testscenarios
import testtools

from shelvefix.backends import real
from shelvefix import explorer
from shelvefix.novacheck import move_rewrites
from shelvefix import race
from shelvefix.race import move_outcomes
from shelvefix.race import outcomes
from shelvefix.tests.nova import base

load_tests = testscenarios.load_tests_apply_scenarios

BACKENDS = [
    ('double', {'backend': 'double'}),
    ('real', {'backend': 'real'}),
]
#: Set it to run :class:`FullTestCase`.
FULL = 'SHELVEFIX_NOVA_FULL'


STALE = move_outcomes.SCHEDULER_INFO_STALE


def labels(exploration):
    return {label for run in exploration.runs for label in run.outcome}


def untracked(exploration):
    """The runs that ended with ``usage untracked``."""
    return [run for run in exploration.runs
            if outcomes.USAGE_UNTRACKED in run.outcome]


def position(run, actor, label, result=None):
    """Where ``actor`` first took a step ``label`` (returning ``result``).

    :returns: its index in the run's trace, or None
    """
    for index, entry in enumerate(run.trace):
        if (entry.step.actor, entry.step.label) == (actor, label) and (
                result is None or entry.result == result):
            return index
    return None


def conflicted(run, actor):
    """True if a PUT of the server's allocations by ``actor`` got a 409."""
    return any(entry.step.actor == actor and
               entry.step.label.startswith('PUT /allocations/{instance}') and
               entry.result.startswith('409 consumer generation conflict')
               for entry in run.trace)


def between(first, middle, last):
    """True if ``middle`` came after ``first`` and before ``last``."""
    return None not in (first, middle, last) and first < middle < last


class MoveTestCase(base.NovaTestCase):

    backend = 'double'

    def setUp(self):
        super(MoveTestCase, self).setUp()
        if self.backend == 'real' and not real.available():
            self.skipTest(real.INSTALL_HINT)
        # Hundreds of runs of nova's code: see test_lifecycle.
        self.useFixture(fixtures.LogHandler(logging.NullHandler(),
                                            level=logging.CRITICAL))
        self.moves = base.load('shelvefix.nova.moves')
        self.nova_exception = base.load('nova.exception')
        self.program = base.load('shelvefix.nova.move_program')
        self.variants = base.load('shelvefix.nova.variants')

    def explore(self, scenario, without=(), **kwargs):
        """Explore completely; ``self.ends`` are the runs' end states.

        ``cloud_cls`` (default ``NovaMoveCloud``) is the cloud fixture;
        the other keyword arguments are its own.

        Their order is the runs' (``zip(exploration.runs, self.ends)``).
        """
        cloud_cls = kwargs.pop('cloud_cls', self.moves.NovaMoveCloud)
        cloud = self.useFixture(cloud_cls(backend=self.backend, **kwargs))
        program = self.program.NovaMoveProgram(cloud, scenario, without)
        exploration = explorer.explore(program)
        self.assertExplored(exploration)
        self.assertTrue(exploration.complete)
        self.assertEqual(len(exploration.runs), len(program.ends))
        self.ends = program.ends
        return exploration

    def assertEnds(self, expected):
        """Every run ended with ``expected`` (a dict of end state items)."""
        self.assertEqual([expected] * len(self.ends),
                         [{key: end[key] for key in expected}
                          for end in self.ends])

    def assertOnly(self, expected, exploration):
        self.assertEqual(set(expected), labels(exploration),
                         exploration.outcome_counts())


class ConfirmTestCase(testscenarios.WithScenarios, MoveTestCase):
    """Confirm against compute-1's audit, on both backends."""

    scenarios = BACKENDS

    def test_confirm_has_no_bad_outcome(self):
        exploration = self.explore(self.program.RESIZE_CONFIRM)
        self.assertOnly([outcomes.OK], exploration)
        self.assertEnds({'instance': ('active', None, 'compute-2'),
                         'migration': 'confirmed', 'held': ['compute-2'],
                         'migration_held': []})


class ConfirmVariantsTestCase(MoveTestCase):

    def test_failed_clean_up_still_frees_the_source(self):
        exploration = self.explore(self.program.RESIZE_CONFIRM,
                                   failing=('confirm_migration',))
        self.assertOnly([outcomes.OK], exploration)
        for run in exploration.runs:
            self.assertIsInstance(run.results['compute-1'].error,
                                  self.moves.DriverFailed)
        # In ERROR for an operator to hard-reboot, the source freed.
        self.assertEnds({'instance': ('error', None, 'compute-2'),
                         'migration': 'error', 'held': ['compute-2'],
                         'migration_held': []})

    def test_pre_1821594_failed_clean_up_leaks_the_source(self):
        exploration = self.explore(self.program.RESIZE_CONFIRM,
                                   manager_cls=self.variants.code(
                                       race.PRE_1821594).manager_cls,
                                   failing=('confirm_migration',))
        for run in exploration.runs:
            self.assertIn(move_outcomes.MIGRATION_LEAKED, run.outcome)
        self.assertEnds({'migration_held': ['compute-1']})

    def test_pre_1879878_audit_makes_the_drop_subtract_twice(self):
        exploration = self.explore(self.program.RESIZE_CONFIRM,
                                   tracker_cls=self.variants.code(
                                       race.PRE_1879878).tracker_cls)
        self.assertOnly([outcomes.OK, outcomes.USAGE_UNTRACKED],
                        exploration)
        for run in exploration.runs:
            # Exactly when the audit listed the migrations after compute-1
            # saved it confirmed and before compute-1's drop: the audit
            # counted nothing, and the drop subtracted the old flavor
            # from nothing.
            audit_between = between(
                position(run, 'compute-1', 'save migration',
                         'status=confirmed'),
                position(run, 'periodic-1', 'list migrations on the node'),
                position(run, 'compute-1', 'acquire lock compute_resources'))
            self.assertEqual(outcomes.USAGE_UNTRACKED in run.outcome,
                             audit_between, run.format_trace())


class RevertTestCase(MoveTestCase):
    """Revert against each node's audit."""

    def test_destination_audit_has_no_bad_outcome(self):
        # But for the scheduler's view: see test_scheduler_keeps_the_...
        exploration = self.explore(self.program.RESIZE_REVERT,
                                   without=('periodic-1',))
        self.assertOnly([STALE], exploration)
        self.assertEnds({'instance': ('active', None, 'compute-1'),
                         'migration': 'reverted', 'held': ['compute-1'],
                         'migration_held': []})

    def test_source_audit_misses_the_reverted_server(self):
        exploration = self.explore(self.program.RESIZE_REVERT,
                                   without=('periodic-2',))
        self.assertOnly([STALE, outcomes.USAGE_UNTRACKED], exploration)
        self.assertEnds({'instance': ('active', None, 'compute-1'),
                         'migration': 'reverted', 'held': ['compute-1'],
                         'migration_held': []})
        for run in untracked(exploration):
            # The audit listed the node's instances before compute-1 saved
            # the server back on it, and did not count the migration: it
            # was reverted already, or the server no longer resizing when
            # the audit read it.
            listed = position(run, 'periodic-1',
                              'list instances on the node')
            saved_back = position(run, 'compute-1', 'save instance',
                                  'vm_state=resized '
                                  'task_state=resize_reverting '
                                  'host=compute-1')
            self.assertLess(listed, saved_back, run.format_trace())

    def test_scheduler_keeps_the_server_on_the_destination(self):
        # compute-2's revert_resize never tells the scheduler the server
        # left (only the cross-cell revert does), and compute-1's
        # finish_revert_resize never tells it the server is back: the
        # scheduler's view is the one finish_resize left, both hosts, until
        # its periodic sync. Bug 1869050's fix covers the confirm only.
        exploration = self.explore(self.program.RESIZE_REVERT,
                                   without=('periodic-1', 'periodic-2'))
        for run in exploration.runs:
            self.assertIn(STALE, run.outcome, run.format_trace())
        self.assertEnds({'instance': ('active', None, 'compute-1'),
                         'migration': 'reverted'})


class RewriteTestCase(MoveTestCase):
    """The pre-1879878 rewrite, on nova's decorator-locked tracker."""

    def test_status_is_saved_before_the_lock(self):
        cls = self.variants.code(race.PRE_1879878).tracker_cls
        for name in move_rewrites.DROP_METHODS:
            self.assertIn(name, vars(cls))
            self.assertIn('_locked_' + name, vars(cls))
        text = cls.rewritten_source
        self.assertIn("        migration.status = 'confirmed'\n"
                      "        migration.save()\n"
                      "        return self._locked_drop_move_claim_at_source("
                      "context, instance, migration)\n", text)


class EvacuateTestCase(MoveTestCase):
    """An evacuation against the source starting again and the audit.

    Explored in parts, each complete: the four actors together make
    thousands of classes of interleavings, minutes of nova's code (see
    :class:`FullEvacuationTestCase`).
    """

    def test_start_up_against_the_claim(self):
        exploration = self.explore(self.program.EVACUATE,
                                   without=('periodic-2',))
        # Also the source's disk kept, when its start-up's shared storage
        # check of an evacuation with no destination yet calls itself
        # (test_evacuation_rpc).
        self.assertOnly([outcomes.OK, outcomes.LEAKED,
                         outcomes.SCHEDULER_409, outcomes.CLAIM_WIPED,
                         move_outcomes.SOURCE_DISK_KEPT], exploration)
        for run, end in zip(exploration.runs, self.ends):
            # compute-1's start-up and the scheduler's claim read the
            # server's allocations at the same generation, and the first
            # to write makes the other's write a 409, which neither
            # retries.
            claim_failed = conflicted(run, 'conductor')
            cleanup_failed = conflicted(run, 'compute-1')
            self.assertEqual(claim_failed, outcomes.CLAIM_WIPED in
                             run.outcome, run.format_trace())
            self.assertEqual(claim_failed, outcomes.SCHEDULER_409 in
                             run.outcome, run.format_trace())
            if claim_failed:
                # In ERROR on the host it left, holding nothing.
                self.assertEqual(('error', None, 'compute-1'),
                                 end['instance'])
                self.assertEqual([], end['held'])
            # The start-up's write lost, and it saved the migration
            # completed anyway: unless compute-2 saved it done after that
            # (the next start-up removes the rest then), the server keeps
            # compute-1's allocations for good; no start-up looks at a
            # completed evacuation again.
            leaked = cleanup_failed and end['migration'] == 'completed'
            self.assertEqual(leaked, outcomes.LEAKED in run.outcome,
                             run.format_trace())
            if cleanup_failed:
                self.assertEqual(
                    {'instance': ('active', None, 'compute-2'),
                     'held': ['compute-1', 'compute-2']},
                    {key: end[key] for key in ('instance', 'held')})

    def test_failed_rebuild_against_start_up(self):
        exploration = self.explore(self.program.EVACUATE,
                                   without=('periodic-2',),
                                   failing=('spawn',))
        self.assertOnly([outcomes.OK, outcomes.CLAIM_WIPED, outcomes.LEAKED,
                         outcomes.SCHEDULER_409,
                         move_outcomes.SOURCE_DISK_KEPT], exploration)
        for run in exploration.runs:
            # Every bad end: the start-up found the evacuation in flight,
            # and removed compute-1 from the allocations of a server that
            # failed to leave it (ERROR there, holding nothing).
            listed = position(run, 'compute-1',
                              'list migrations on the node')
            ended = min((
                index for index, entry in enumerate(run.trace)
                if entry.step.label == 'save migration' and
                entry.result in ('status=failed', 'status=error',
                                 'status=done')), default=len(run.trace))
            if run.outcome != (outcomes.OK,):
                self.assertLess(listed, ended, run.format_trace())

    def test_rebuild_against_the_audit(self):
        exploration = self.explore(self.program.EVACUATE,
                                   without=('compute-1',))
        self.assertOnly([outcomes.OK, outcomes.USAGE_UNTRACKED],
                        exploration)
        self.assertEnds({'instance': ('active', None, 'compute-2'),
                         'migration': 'done'})
        for run in untracked(exploration):
            # The audit listed compute-2's instances before the server was
            # saved there, and did not count the migration: the rebuild's
            # end (no task state) was saved already, apart from the host.
            listed = position(run, 'periodic-2',
                              'list instances on the node')
            rebuilt = position(run, 'compute-2', 'save instance',
                               'vm_state=active task_state=None '
                               'host=compute-1')
            saved_there = position(run, 'compute-2', 'save instance',
                                   'vm_state=active task_state=None '
                                   'host=compute-2')
            read = position(run, 'periodic-2', 'read instance')
            self.assertTrue(listed < saved_there and rebuilt < read,
                            run.format_trace())

    def test_start_up_cleans_up_a_guest_its_hypervisor_lost(self):
        # compute-1 was redeployed while down: its hypervisor has no guest
        # of the server, and its start-up cleans up all the same.
        exploration = self.explore(self.program.EVACUATE,
                                   without=('conductor', 'periodic-2'),
                                   guest_lost=True)
        self.assertNotIn(outcomes.LEAKED, labels(exploration))
        after = [end for run, end in zip(exploration.runs, self.ends)
                 if position(run, 'compute-2', 'save migration',
                             'status=done') <
                 position(run, 'compute-1', 'list instances on the node')]
        self.assertTrue(after)
        for end in after:
            self.assertEqual(('completed', ['compute-2']),
                             (end['migration'], end['held']))

    def test_start_up_after_the_evacuation_must_clean_up(self):
        # A start-up that leaves a done evacuation alone (as nova's did
        # before bug 1724172's fix, for a guest its hypervisor lost): the
        # server keeps compute-1's allocations, and no later start-up
        # would remove them.
        cls = self.moves.NovaMoveCloud
        self.useFixture(fixtures.MockPatch(
            'nova.compute.manager.ComputeManager.'
            '_destroy_evacuated_instances', return_value={}))
        exploration = self.explore(self.program.EVACUATE,
                                   without=('conductor', 'periodic-2'),
                                   cloud_cls=cls)
        for run, end in zip(exploration.runs, self.ends):
            done = position(run, 'compute-2', 'save migration',
                            'status=done')
            started = position(run, 'compute-1', 'list instances on the node')
            self.assertIsNotNone(started, run.format_trace())
            after = done is not None and done < started
            self.assertEqual(after, outcomes.LEAKED in run.outcome,
                             run.format_trace())
        self.assertIn(outcomes.LEAKED, labels(exploration))

    def test_start_up_ends_the_evacuation_in_flight(self):
        # Bounded: the first 300 of its 2,267 classes (315 s complete).
        cloud = self.useFixture(self.moves.NovaMoveCloud(
            backend=self.backend))
        program = self.program.NovaMoveProgram(
            cloud, self.program.EVACUATE, without=('conductor',))
        exploration = explorer.explore(program, max_runs=300)
        self.assertExplored(exploration)
        self.assertOnly([outcomes.OK, outcomes.USAGE_UNTRACKED],
                        exploration)
        in_flight = [
            run for run in untracked(exploration) if between(
                position(run, 'compute-1', 'save migration',
                         'status=completed'),
                position(run, 'periodic-2', 'list migrations on the node'),
                position(run, 'compute-2', 'save migration', 'status=done'))]
        # compute-1 completed the migration while compute-2 was still
        # rebuilding, and the audit in between found none in progress.
        self.assertTrue(in_flight)


@testtools.skipUnless(os.environ.get(FULL), 'minutes of nova code: set %s=1'
                      % FULL)
class FullTestCase(MoveTestCase):
    """The scenarios with every actor at once (20 minutes on two cores).

    ``SHELVEFIX_NOVA_FULL=1 tox -e nova -- test_moves.FullTestCase``.
    They show what their parts show, and nothing else.
    """

    def test_revert_is_the_product_of_its_parts(self):
        full = self.explore(self.program.RESIZE_REVERT)
        source = self.explore(self.program.RESIZE_REVERT,
                              without=('periodic-2',))
        destination = self.explore(self.program.RESIZE_REVERT,
                                   without=('periodic-1',))
        self.assertEqual(len(source.runs) * len(destination.runs),
                         len(full.runs))
        self.assertEqual(labels(source) | labels(destination), labels(full))

    def test_evacuation_shows_what_its_parts_show(self):
        full = self.explore(self.program.EVACUATE)
        self.assertOnly([outcomes.OK, outcomes.LEAKED, outcomes.SCHEDULER_409,
                         outcomes.CLAIM_WIPED, outcomes.USAGE_UNTRACKED],
                        full)

    def test_delete_shows_what_its_part_shows(self):
        full = self.explore(self.program.RESIZE_DELETE)
        self.assertOnly([outcomes.OK, 'compute-1 error: AttributeError',
                         'delete error: AttributeError'], full)


class DeleteTestCase(MoveTestCase):
    """The API deleting a resized server while its user confirms it."""

    def test_two_confirms_race(self):
        exploration = self.explore(self.program.RESIZE_DELETE,
                                   without=('periodic-1',))
        second = {'compute-1 error: AttributeError',
                  'delete error: AttributeError'}
        self.assertOnly({outcomes.OK} | second, exploration)
        for run, end in zip(exploration.runs, self.ends):
            failed = [name for name in ('compute-1', 'delete')
                      if run.results[name].error is not None and
                      not isinstance(run.results[name].error,
                                     self.nova_exception.InstanceNotFound)]
            if not failed:
                # Deleted, and nothing left anywhere.
                self.assertEqual(([], []), (end['held'],
                                            end['migration_held']))
                continue
            # Both confirms passed the status check (the migration each
            # was handed was not confirmed yet); the second found the
            # migration context the first dropped, and crashed.
            self.assertEqual(1, len(failed), run.format_trace())
            error = run.results[failed[0]].error
            self.assertIn("'get_pci_mapping_for_migration'", str(error))
            self.assertEqual('error', end['migration'])
            if failed == ['delete']:
                # The delete failed: not deleted, in ERROR on compute-2.
                self.assertEqual(('error', None, 'compute-2'),
                                 end['instance'])
                self.assertEqual(['compute-2'], end['held'])
