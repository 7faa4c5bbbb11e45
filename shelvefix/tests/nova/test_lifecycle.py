"""The shelve/unshelve lifecycle explored on nova's own code.

The interleaving explorer runs nova's services (see
:mod:`shelvefix.nova.lifecycle` for what runs and what is stubbed)
through every class of equivalent interleavings of their steps (placement
requests, instance reads and saves, casts, nova's locks), against the
placement double and the real placement service, and reads each run's
outcome from the end state (:mod:`shelvefix.nova.program`).

What nova's latest release shows:

* an unshelve racing compute-2's periodic audit, with or without a port
  binding failure: no bad outcome in any interleaving;
* the whole lifecycle, and already the offload against a whole unshelve
  (compute-2's part explored too: ``program.OFFLOAD_TAIL``): one bad
  outcome, ``host lost``. ``_shelve_offload_instance`` saves twice: once
  to make ``SHELVED_OFFLOADED`` visible, then (``expected_task_state`` not
  checked) to clear host and node. An unshelve started on the first save
  can claim compute-2 and save that host before the second save lands;
  the server then runs on compute-2, recorded on no host. Nothing else
  goes wrong: no 409, no wiped claim, no leak, no usage lost.

And each bug, on nova's code moved back to its pre-fix shape by one
rewrite (:mod:`shelvefix.nova.variants`), shows its symptom: bug
1798688 (``legacy_order``) the scheduler's 409 and the wiped claim, bug
2025480 (``untrack_spawning``) compute-2's audit dropping the spawning
server, bug 1862633 (``leak_on_bind_failure``) the destination's
allocations kept after a port binding failure.

The whole lifecycle (five actors, about a thousand classes of
interleavings) is explored on the double; on the real service its first
interleavings are replayed and must end as on the double.
"""

import logging

import fixtures
import testscenarios

from shelvefix.backends import real
from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.tests.nova import base

load_tests = testscenarios.load_tests_apply_scenarios

BACKENDS = [
    ('double', {'backend': 'double'}),
    ('real', {'backend': 'real'}),
]
#: How many lifecycle interleavings the real service replays.
REAL_PREFIX = 40


def labels(exploration):
    """Every label some run of the exploration ended with."""
    return {label for run in exploration.runs for label in run.outcome}


def host_wiped(record):
    """True if compute-1 cleared the host after compute-2 saved its own."""
    saves = [(entry.step.actor, entry.result) for entry in record.trace
             if entry.step.label == 'save instance']
    claimed = [index for index, (actor, result) in enumerate(saves)
               if actor == 'compute-2' and 'host=compute-2' in result]
    return bool(claimed) and any(
        actor == 'compute-1' and result.endswith('host=None')
        for actor, result in saves[claimed[0]:])


class ExplorationTestCase(base.NovaTestCase):
    """Explores scenarios on a :class:`~.lifecycle.NovaCloud`."""

    backend = 'double'

    def setUp(self):
        super(ExplorationTestCase, self).setUp()
        if self.backend == 'real' and not real.available():
            self.skipTest(real.INSTALL_HINT)
        # Up to a thousand runs of nova's code per test: its logs (nova
        # warns in many runs) would make a detail of megabytes, more than a
        # subunit packet holds. The runs' outcomes and traces say what
        # happened.
        self.useFixture(fixtures.LogHandler(logging.NullHandler(),
                                            level=logging.CRITICAL))
        self.lifecycle = base.load('shelvefix.nova.lifecycle')
        self.program = base.load('shelvefix.nova.program')
        self.variants = base.load('shelvefix.nova.variants')

    def cloud(self, **kwargs):
        return self.useFixture(self.lifecycle.NovaCloud(
            backend=self.backend, **kwargs))

    def explore(self, scenario, max_runs=None, reduce=True, actors=None,
                **kwargs):
        exploration = self.program.explore(
            self.cloud(**kwargs), scenario, reduce=reduce, max_runs=max_runs,
            actors=actors)
        self.assertExplored(exploration)
        self.assertEqual(max_runs is None, exploration.complete)
        return exploration

    def assertOnly(self, expected, exploration):
        self.assertEqual(set(expected), labels(exploration),
                         exploration.outcome_counts())

    def code(self, variant):
        """The manager and tracker classes of a pre-fix variant."""
        return self.variants.code(variant)

    def explore_tail(self, **kwargs):
        """The offload against a whole unshelve, compute-2 explored too."""
        return self.explore(self.program.OFFLOAD_UNSHELVE,
                            actors=self.program.OFFLOAD_TAIL, **kwargs)


class ScenarioTestCase(testscenarios.WithScenarios, ExplorationTestCase):
    """The smaller scenarios, complete, on both backends."""

    scenarios = BACKENDS

    def test_unshelve_against_audit_has_no_bad_outcome(self):
        exploration = self.explore(self.program.UNSHELVE_PERIODIC)
        self.assertOnly([outcomes.OK], exploration)

    def test_binding_failure_gives_the_claim_back(self):
        exploration = self.explore(self.program.UNSHELVE_PERIODIC,
                                   binding_fails=True)
        self.assertOnly([outcomes.OK], exploration)
        # nova ran its clean-up: the binding failed in every run.
        self.assertEqual(
            {'PortBindingFailed'},
            {type(run.results['compute-2'].error).__name__
             for run in exploration.runs})

    def test_offload_tail_loses_the_unshelved_host(self):
        exploration = self.explore_tail()
        self.assertOnly([outcomes.OK, outcomes.HOST_LOST], exploration)
        for run in exploration.runs:
            self.assertEqual(outcomes.HOST_LOST in run.outcome,
                             host_wiped(run), run.format_trace())

    def test_pre_1798688_scheduler_409_and_claim_wiped(self):
        exploration = self.explore_tail(
            manager_cls=self.code(race.LEGACY).manager_cls)
        found = labels(exploration)
        self.assertIn(outcomes.SCHEDULER_409, found)
        self.assertIn(outcomes.CLAIM_WIPED, found)

    def test_pre_2025480_audit_untracks_the_spawning_server(self):
        exploration = self.explore(self.program.UNSHELVE_PERIODIC,
                                   tracker_cls=self.code(
                                       race.PRE_2025480).tracker_cls)
        self.assertOnly([outcomes.OK, outcomes.USAGE_UNTRACKED],
                        exploration)
        run = exploration.first((outcomes.USAGE_UNTRACKED,))
        # The audit listed the server while compute-2 was spawning it.
        listed = [entry for entry in run.trace
                  if entry.step.actor == 'periodic-2' and
                  entry.step.label == 'list instances on the node']
        self.assertEqual(['1 row(s)'], [entry.result for entry in listed])

    def test_pre_1862633_binding_failure_leaks_the_claim(self):
        exploration = self.explore(self.program.UNSHELVE_PERIODIC,
                                   manager_cls=self.code(
                                       race.PRE_1862633).manager_cls,
                                   binding_fails=True)
        for run in exploration.runs:
            self.assertIn(outcomes.LEAKED, run.outcome)


class ReductionTestCase(ExplorationTestCase):
    """The reduction finds what every interleaving shows, in fewer runs."""

    def test_reduced_search_finds_the_same_outcomes(self):
        legacy = self.code(race.LEGACY).manager_cls
        reduced = self.explore_tail(manager_cls=legacy)
        every = self.explore_tail(reduce=False, manager_cls=legacy)
        self.assertEqual(set(every.outcome_counts()),
                         set(reduced.outcome_counts()))
        self.assertLess(len(reduced.runs), len(every.runs))


class LifecycleTestCase(ExplorationTestCase):
    """The whole lifecycle: five actors, nova's latest release."""

    def test_only_the_offload_tail_goes_wrong(self):
        exploration = self.explore(self.program.LIFECYCLE)
        self.assertOnly([outcomes.OK, outcomes.HOST_LOST], exploration)
        for run in exploration.runs:
            self.assertEqual(outcomes.HOST_LOST in run.outcome,
                             host_wiped(run), run.format_trace())

    def test_real_placement_ends_every_run_as_the_double(self):
        double = self.explore(self.program.LIFECYCLE, max_runs=REAL_PREFIX)
        self.backend = 'real'
        if not real.available():
            self.skipTest(real.INSTALL_HINT)
        on_real = self.explore(self.program.LIFECYCLE, max_runs=REAL_PREFIX)
        self.assertEqual([(run.schedule, run.outcome) for run in double.runs],
                         [(run.schedule, run.outcome)
                          for run in on_real.runs])
