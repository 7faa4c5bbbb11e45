"""The move scenarios explored on the placement double.

Every cell of ``resize-confirm``, ``resize-revert`` and ``evacuate`` but
one is explored here, on :class:`~shelvefix.backends.fixture.
PlacementFixture`: the corrected code shows nothing bad, each variant the
symptom of its bug. nova-evacuate's cell takes twenty seconds or more and
is explored in :mod:`shelvefix.tests.functional.race.test_move_scenarios`.
``resize-delete``'s corrected cell, with the defects it found and how
the library fixes them, is explored in
:mod:`~shelvefix.tests.unit.race.test_move_delete`; its ``confirm-fails``
cell, over a thousand runs, in the functional tests too.

Then what the explorer's steps say of the moves: the migration store's
steps, and the footprint of a ``POST /allocations`` (several consumers at
once) and what it teaches the transport about their holdings.
"""

import logging
from unittest import mock

import fixtures
import testscenarios

from shelvefix.backends import fixture
from shelvefix.explorer import model
from shelvefix.explorer import runner
from shelvefix.objects import migration as migration_obj
from shelvefix import race
from shelvefix.race import move_outcomes
from shelvefix.race import move_program
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.race import steps
from shelvefix.race import targets
from shelvefix.race import variants
from shelvefix.tests import base

load_tests = testscenarios.load_tests_apply_scenarios

#: The bad labels each cell must show, in some run; nothing else.
EXPECTED_BAD = {
    race.RESIZE_CONFIRM: {
        (race.CORRECTED, None): set(),
        (race.CORRECTED, race.CONFIRM_FAILS): set(),
        (race.PRE_1879878, None): {outcomes.USAGE_UNTRACKED},
        (race.PRE_1821594, race.CONFIRM_FAILS):
            {move_outcomes.MIGRATION_LEAKED},
    },
    race.RESIZE_REVERT: {
        (race.CORRECTED, None): set(),
        (race.NOVA_REVERT, None): {outcomes.USAGE_UNTRACKED},
    },
    race.EVACUATE: {
        (race.CORRECTED, None): set(),
        (race.CORRECTED, race.REBUILD_FAILS): set(),
        (race.NOVA_EVACUATE, None): {outcomes.USAGE_UNTRACKED,
                                     outcomes.SCHEDULER_409,
                                     outcomes.CLAIM_WIPED},
    },
    race.RESIZE_DELETE: {
        (race.CORRECTED, None): set(),
        (race.CORRECTED, race.CONFIRM_FAILS): set(),
    },
    race.RESIZE_MIGRATE: {
        (race.CORRECTED, None): set(),
        (race.CORRECTED, race.CONFIRM_FAILS): set(),
        (race.PRE_1879878, None): {outcomes.USAGE_UNTRACKED},
        (race.PRE_1821594, race.CONFIRM_FAILS):
            {move_outcomes.MIGRATION_LEAKED},
    },
}
#: Explored in the functional tests: too slow here.
SLOW = {(race.EVACUATE, race.NOVA_EVACUATE, None),
        (race.RESIZE_DELETE, race.CORRECTED, race.CONFIRM_FAILS)}
#: The cells whose bug shows in every run.
ALWAYS = {(race.RESIZE_CONFIRM, race.PRE_1821594, race.CONFIRM_FAILS),
          (race.RESIZE_MIGRATE, race.PRE_1821594, race.CONFIRM_FAILS)}


def cells(names=(race.RESIZE_CONFIRM, race.RESIZE_REVERT, race.EVACUATE,
                 race.RESIZE_MIGRATE), slow=False):
    """testscenarios' scenarios: one per cell (fast or slow ones)."""
    return [('%s_%s' % (name, '_'.join(p for p in cell if p)),
             {'scenario_name': name, 'cell': cell})
            for name in names
            for cell in scenarios.get_scenario(name).cells()
            if ((name, cell.variant, cell.fault) in SLOW) == slow]


def quiet(test):
    """Hundreds of runs: keep their debug logs out of the details."""
    test.useFixture(fixtures.FakeLogger(
        level=logging.WARNING, format='%(levelname)s %(name)s %(message)s'))


def check_cell(test, placement, name, cell):
    """Explore a cell; assert it shows its expected labels and no other."""
    exploration = targets.explore_cell(placement, cell, scenario_name=name,
                                       workers=1)
    test.assertTrue(exploration.complete)
    test.assertEqual(0, exploration.blocked)
    counts = exploration.outcome_counts()
    labels = {label for outcome in counts for label in outcome}
    test.assertEqual(EXPECTED_BAD[name][(cell.variant, cell.fault)],
                     labels - {outcomes.OK})
    if (name, cell.variant, cell.fault) in ALWAYS:
        test.assertNotIn((outcomes.OK,), counts)
    else:
        test.assertGreater(counts.get((outcomes.OK,), 0), 0)
    if cell.variant == race.CORRECTED:
        test.assertEqual({(outcomes.OK,)}, set(counts))
    actors = {actor for actor, _host in scenarios.get_scenario(name).actors}
    for run in exploration.runs:
        test.assertEqual(actors, set(run.results))
    # The runs leave nothing in placement, and the program its providers.
    if placement.state is not None:
        test.assertEqual({}, placement.state.consumers)
        test.assertEqual({}, placement.state.providers)
    return exploration


class MoveCellsTestCase(testscenarios.WithScenarios, base.TestCase):

    scenarios = cells()

    def setUp(self):
        super(MoveCellsTestCase, self).setUp()
        quiet(self)
        self.placement = self.useFixture(fixture.PlacementFixture())

    def test_each_bug_shows_where_it_should(self):
        check_cell(self, self.placement, self.scenario_name, self.cell)


class MoveScenariosTestCase(base.TestCase):

    def test_the_cells_are_the_programs(self):
        for name, expected in EXPECTED_BAD.items():
            scenario = scenarios.get_scenario(name)
            self.assertEqual(
                [scenarios.Cell(variant, None, fault)
                 for variant, fault in scenario.variant_faults],
                scenario.cells())
            self.assertEqual(set(expected), set(scenario.variant_faults))
            prog = targets.program(None, scenario, scenario.cells()[0])
            self.assertIsInstance(prog, move_program.MoveRaceProgram)
            self.assertEqual(scenario.actor_names, prog.actors)

    def test_every_move_variant_has_its_code(self):
        for variant in (race.PRE_1879878, race.PRE_1821594,
                        race.NOVA_REVERT, race.NOVA_EVACUATE):
            code = variants.code(variant)
            corrected = variants.code(race.CORRECTED)
            self.assertNotEqual(corrected, code)
            self.assertTrue(issubclass(code.manager_cls,
                                       corrected.manager_cls))
            self.assertTrue(issubclass(code.tracker_cls,
                                       corrected.tracker_cls))
            # Built once.
            self.assertEqual(code, variants.code(variant))


def one_run(placement, name, cell):
    """One run of a cell (the first enabled actor at each step)."""
    prog = targets.program(placement, scenarios.get_scenario(name),
                           cell)
    with scenarios.closing(prog):
        return runner.replay(prog, ())


class MoveStepsTestCase(base.TestCase):
    """The explorer sees the migration record and the moves' requests."""

    def setUp(self):
        super(MoveStepsTestCase, self).setUp()
        quiet(self)
        self.placement = self.useFixture(fixture.PlacementFixture())

    def steps(self, name):
        run = one_run(self.placement, name,
                      scenarios.get_scenario(name).cells()[0])
        self.assertEqual((outcomes.OK,), run.outcome)
        return [entry.step for entry in run.trace]

    def test_migration_steps(self):
        found = self.steps(race.RESIZE_CONFIRM)
        labels = [step.label for step in found]
        for label in ('read migration', 'save migration',
                      'list migrations on the node'):
            self.assertIn(label, labels)
        for step in found:
            if 'migration' in step.label and step.kind != 'placement':
                # A list reads the table too (a row may appear).
                self.assertEqual(
                    frozenset(['migration:{migration}']),
                    step.resource - frozenset(['migration:*']))
                self.assertEqual('list' in step.label,
                                 'migration:*' in step.resource)
        saves = [step for step in found if step.label == 'save migration']
        self.assertEqual([model.WRITE] * len(saves),
                         [step.access for step in saves])
        # The confirm's status is saved under compute-1's tracker lock.
        self.assertIn(['acquire lock compute_resources', 'save migration',
                       'release lock compute_resources'],
                      [labels[i:i + 3] for i in range(len(labels))])

    def test_the_revert_moves_the_allocations_in_one_post(self):
        posts = [step for step in self.steps(race.RESIZE_REVERT)
                 if step.label == 'POST /allocations']
        self.assertEqual(1, len(posts))
        self.assertEqual('compute-1', posts[0].actor)
        self.assertEqual(model.WRITE, posts[0].access)
        self.assertEqual(frozenset([
            'consumer:{instance}', 'consumer:{migration}',
            'provider:{compute-1}', 'provider:{compute-2}']),
            posts[0].resource)


C1, C2, C3 = 'c1', 'c2', 'c3'
SRC, DST, OTHER = 'rp-src', 'rp-dst', 'rp-other'


class Response(object):

    def __init__(self, status, body=None):
        self.status_code = status
        self._body = body or {}

    def json(self):
        return self._body


def move_body(source=C1, target=C2, to=SRC):
    """A move's ``POST /allocations``: ``source`` empties, ``target`` gets."""
    return {
        source: {'allocations': {}, 'project_id': 'p', 'user_id': 'u',
                 'consumer_generation': 1},
        target: {'allocations': {to: {'resources': {'VCPU': 1}}},
                 'project_id': 'p', 'user_id': 'u',
                 'consumer_generation': None},
    }


class PostAllocationsFootprintTestCase(base.TestCase):

    def setUp(self):
        super(PostAllocationsFootprintTestCase, self).setUp()
        # c1 (a migration) holds the source, c2 (the server) the
        # destination.
        self.transport = steps.StepTransport(
            mock.Mock(), mock.Mock(), steps.Names([]), (SRC, DST, OTHER),
            {C1: {SRC}, C2: {DST}})

    def test_both_consumers_and_all_their_providers(self):
        self.assertEqual(
            (frozenset(['consumer:c1', 'consumer:c2', 'provider:rp-src',
                        'provider:rp-dst']), model.WRITE),
            self.transport.footprint('POST', '/allocations', move_body()))

    def test_the_providers_given(self):
        # c3 holds nothing yet: what it is given is touched.
        self.assertEqual(
            {'consumer:c1', 'consumer:c3', 'provider:rp-src',
             'provider:rp-other'},
            self.transport.footprint('POST', '/allocations', move_body(
                target=C3, to=OTHER))[0])

    def test_unrelated_to_a_consumer_elsewhere(self):
        moving = self.transport.footprint('POST', '/allocations',
                                          move_body(target=C3))[0]
        claiming = self.transport.footprint(
            'PUT', '/allocations/c4', {'allocations': {OTHER: {}}})[0]
        self.assertEqual(frozenset(), moving & claiming)

    def test_an_empty_post_touches_everything(self):
        self.assertEqual(
            {'consumer:c1', 'consumer:c2', 'provider:rp-src',
             'provider:rp-dst', 'provider:rp-other'},
            self.transport.footprint('POST', '/allocations', {})[0])

    def test_names(self):
        transport = steps.StepTransport(
            mock.Mock(), mock.Mock(),
            steps.Names([(C1, '{migration}'), (C2, '{instance}'),
                         (SRC, '{compute-1}'), (DST, '{compute-2}')]),
            (SRC, DST), {C1: {SRC}, C2: {DST}})
        self.assertEqual(
            {'consumer:{migration}', 'consumer:{instance}',
             'provider:{compute-1}', 'provider:{compute-2}'},
            transport.footprint('POST', '/allocations', move_body())[0])

    def test_holdings_learned_from_the_response(self):
        learn = self.transport._learn
        holdings = self.transport.holdings
        # Refused: nothing changed.
        learn('POST', '/allocations', move_body(), Response(409))
        self.assertEqual({C1: {SRC}, C2: {DST}}, holdings)
        learn('POST', '/allocations', move_body(), Response(400))
        self.assertEqual({C1: {SRC}, C2: {DST}}, holdings)
        # Done: every consumer holds what the body gave it.
        learn('POST', '/allocations', move_body(), Response(204))
        self.assertEqual({C1: set(), C2: {SRC}}, holdings)
        # Footprints follow.
        self.assertEqual(
            {'consumer:c2', 'provider:rp-src'},
            self.transport.footprint('DELETE', '/allocations/c2', None)[0])
        # Unknown (a 5xx, or no answer): anything goes, for both.
        learn('POST', '/allocations', move_body(target=C3), Response(503))
        self.assertEqual({SRC, DST, OTHER}, holdings[C1])
        self.assertEqual({SRC, DST, OTHER}, holdings[C3])
        learn('POST', '/allocations', move_body(C2, C1), None)
        self.assertEqual({SRC, DST, OTHER}, holdings[C2])

    def test_label(self):
        self.assertEqual('POST /allocations', self.transport._label(
            'POST', '/allocations', move_body()))


class MigrationStoreStepsTestCase(base.TestCase):

    def test_store_steps_of_kind_migration(self):
        store = migration_obj.MigrationStore()
        uuids = ('6d4c3d8a-3a6e-4f0e-9d59-4b7c1e2a0011',
                 '6d4c3d8a-3a6e-4f0e-9d59-4b7c1e2a0012')
        for uuid in uuids:
            migration_obj.Migration.create(store, uuid)
        controller = mock.Mock()
        stepper = steps.StoreStepper(
            controller, store, 'wait',
            steps.Names([(uuids[0], '{migration}')]), kind='migration')
        stepper('get', uuids[0])
        stepper('update', uuids[0])
        stepper('list', None)
        stepper('create', uuids[1])
        self.assertEqual([
            mock.call('migration', frozenset(['migration:{migration}']),
                      access=model.READ, label='read migration',
                      guard=None),
            mock.call('migration', frozenset(['migration:{migration}']),
                      access=model.WRITE, label='save migration',
                      guard=None),
            mock.call('migration', frozenset([
                'migration:{migration}', 'migration:' + uuids[1],
                'migration:*']),
                      access=model.READ,
                      label='list migrations on the node', guard=None),
            mock.call('migration',
                      frozenset(['migration:' + uuids[1], 'migration:*']),
                      access=model.WRITE, label='create migration',
                      guard=None)],
            controller.step.call_args_list)
