"""The move scenarios' slow cells, and the corrected ones on real placement.

The unit tests (:mod:`shelvefix.tests.unit.race.test_move_program`)
explore every move cell on the placement double but two, explored here:
resize-delete with ``confirm-fails`` (over a thousand runs, nothing bad),
and nova-evacuate's evacuation, hundreds of runs. That one shows the three
defects nova's evacuation still has: the source's start-up removing its
allocations while the scheduler claims the destination (``scheduler
409``, ``claim wiped``), and the destination's audit no longer counting
the server it rebuilds (``usage untracked``).

The corrected cells that explore in a few seconds on the real placement
service are explored there too: the double's answers are not what keeps
them clean. (Its resize-revert cell and the evacuation with a failing
rebuild take half a minute each there and stay on the double.)
"""

import testscenarios

from shelvefix import backends
from shelvefix.backends import real
from shelvefix import race
from shelvefix.race import scenarios
from shelvefix.tests import base
from shelvefix.tests.unit.race import test_move_delete
from shelvefix.tests.unit.race import test_move_program

load_tests = testscenarios.load_tests_apply_scenarios

#: The corrected cells explored on real placement.
REAL = [(race.RESIZE_CONFIRM, scenarios.Cell(race.CORRECTED, None, None)),
        (race.RESIZE_CONFIRM, scenarios.Cell(race.CORRECTED, None,
                                             race.CONFIRM_FAILS)),
        (race.EVACUATE, scenarios.Cell(race.CORRECTED, None, None))]


class SlowMoveCellsTestCase(testscenarios.WithScenarios, base.TestCase):

    scenarios = (test_move_program.cells(slow=True) +
                 test_move_program.cells(names=(race.RESIZE_DELETE,),
                                         slow=True))

    def setUp(self):
        super(SlowMoveCellsTestCase, self).setUp()
        test_move_program.quiet(self)
        self.placement = self.useFixture(backends.make_backend('double'))

    def test_each_bug_shows_where_it_should(self):
        exploration = test_move_program.check_cell(
            self, self.placement, self.scenario_name, self.cell)
        if self.scenario_name == race.RESIZE_DELETE:
            # The concurrent delete with a failing confirm: nothing bad.
            self.assertEqual((race.CORRECTED, race.CONFIRM_FAILS),
                             (self.cell.variant, self.cell.fault))
            test_move_delete.check_clean(self, exploration)
            return
        self.assertEqual((race.EVACUATE, race.NOVA_EVACUATE),
                         (self.scenario_name, self.cell.variant))
        # The claim lost to the source's clean-up, in runs of their own.
        self.assertIn(('scheduler 409', 'claim wiped'),
                      exploration.outcome_counts())


class RealPlacementMoveCellsTestCase(testscenarios.WithScenarios,
                                     base.TestCase):

    scenarios = [('%s_%s' % (name, '_'.join(p for p in cell if p)),
                  {'scenario_name': name, 'cell': cell})
                 for name, cell in REAL]

    def setUp(self):
        super(RealPlacementMoveCellsTestCase, self).setUp()
        test_move_program.quiet(self)
        if not real.available():
            self.skipTest(real.INSTALL_HINT)
        self.placement = self.useFixture(backends.make_backend('real'))

    def test_corrected_shows_nothing_bad(self):
        test_move_program.check_cell(self, self.placement,
                                     self.scenario_name, self.cell)
