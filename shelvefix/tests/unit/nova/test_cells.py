"""``shelvefix.nova.cells``: each scenario's matrix on nova."""

from shelvefix import nova
from shelvefix import race
from shelvefix.race import scenarios
from shelvefix.tests import base


class CellsTestCase(base.TestCase):

    def test_every_scenario_keeps_the_variants_nova_has(self):
        for scenario in scenarios.SCENARIOS.values():
            found = nova.cells(scenario)
            self.assertTrue(found, scenario.name)
            self.assertEqual(len(found), len(set(found)), scenario.name)
            for cell in found:
                self.assertIn(cell.variant, nova.VARIANTS, scenario.name)
                self.assertNotIn(cell.variant,
                                 (race.NOVA_REVERT, race.NOVA_EVACUATE))
                self.assertIsNone(cell.free, scenario.name)
            # Every library cell of a nova variant, in the library's order.
            expected = []
            for cell in scenario.cells(ghost=True):
                if (cell.variant in nova.VARIANTS and
                        cell.fault != race.GHOST):
                    cell = cell._replace(free=None)
                    if cell not in expected:
                        expected.append(cell)
            self.assertEqual(expected, found, scenario.name)

    def test_offload_unshelve_is_one_cell_per_ordering(self):
        scenario = scenarios.get_scenario(race.OFFLOAD_UNSHELVE)
        self.assertEqual([scenarios.Cell(race.CORRECTED, None),
                          scenarios.Cell(race.LEGACY, None)],
                         nova.cells(scenario))

    def test_nova_parts_are_nova_as_it_is(self):
        # The library's nova-revert and nova-evacuate are its code with
        # one part as nova has it: on nova, that is the corrected cell.
        for name, dropped in ((race.RESIZE_REVERT, race.NOVA_REVERT),
                              (race.EVACUATE, race.NOVA_EVACUATE)):
            scenario = scenarios.get_scenario(name)
            self.assertIn(dropped, [c.variant for c in scenario.cells()])
            self.assertNotIn(dropped,
                             [c.variant for c in nova.cells(scenario)])
        self.assertEqual(
            [scenarios.Cell(race.CORRECTED, None)],
            nova.cells(scenarios.get_scenario(race.RESIZE_REVERT)))
        self.assertEqual(
            [scenarios.Cell(race.CORRECTED, None),
             scenarios.Cell(race.CORRECTED, None, race.REBUILD_FAILS)],
            nova.cells(scenarios.get_scenario(race.EVACUATE)))

    def test_faults_other_than_ghost_are_kept(self):
        scenario = scenarios.get_scenario(race.UNSHELVE_PERIODIC)
        self.assertEqual(
            [(race.CORRECTED, None), (race.CORRECTED, race.PORT_BINDING),
             (race.PRE_2025480, None), (race.PRE_2025480, race.PORT_BINDING),
             (race.PRE_1862633, None),
             (race.PRE_1862633, race.PORT_BINDING)],
            [(c.variant, c.fault) for c in nova.cells(scenario)])
