"""Tests for the contract scenario registry and the scenario set."""

import collections

import fixtures
import testtools

from shelvefix.contract import registry
from shelvefix.contract import scenarios


class RegistryTestCase(testtools.TestCase):

    def setUp(self):
        super(RegistryTestCase, self).setUp()
        # An empty registry of our own; the real one is left untouched.
        self.useFixture(fixtures.MockPatchObject(
            registry, '_SCENARIOS', collections.OrderedDict()))

    def test_register_and_get(self):
        @registry.scenario('one', 'the first')
        def one(api):
            pass

        @registry.scenario('two', 'the second')
        def two(api):
            pass

        self.assertEqual(['one', 'two'], registry.names())
        self.assertEqual(registry.Scenario('one', 'the first', one),
                         registry.get('one'))

    def test_config(self):
        config = {'cors': {'allowed_origin': ['http://a.example']}}

        @registry.scenario('configured', 'with CORS', config=config)
        def configured(api):
            pass

        self.assertEqual(config, registry.get('configured').config)
        for bad in ({'cors': ['allowed_origin']}, [('cors', {})],
                    {1: {}}):
            self.assertRaises(ValueError, registry.scenario, 'bad', 'x',
                              config=bad)

    def test_bad_registrations(self):
        self.assertRaises(ValueError, registry.scenario, 'Bad-Name', 'x')
        self.assertRaises(ValueError, registry.scenario, 'ok', '')
        self.assertRaises(ValueError, registry.scenario, 'ok', 'two\nlines')
        registry.scenario('dup', 'once')(lambda api: None)
        self.assertRaises(ValueError,
                          registry.scenario('dup', 'twice'), lambda api: None)

    def test_unknown(self):
        exc = self.assertRaises(registry.UnknownScenario, registry.get,
                                'nope')
        self.assertIn("unknown contract scenario 'nope'", str(exc))
        self.assertIsInstance(exc, KeyError)


class ScenarioSetTestCase(testtools.TestCase):
    """The registered scenarios themselves."""

    def test_count_and_names(self):
        names = scenarios.names()
        self.assertGreaterEqual(len(names), 40)
        self.assertEqual(len(names), len(set(names)))
        for name in ('allocations_get_unknown', 'allocations_get_known',
                     'allocations_put_without_generation',
                     'allocations_put_unknown_with_generation',
                     'allocations_put_wrong_generation',
                     'allocations_put_empty_deletes_consumer',
                     'allocations_put_empty_unknown_consumer',
                     'allocations_delete_unknown',
                     'allocations_put_malformed_json',
                     'allocations_unsupported_microversion',
                     'race_offload_then_claim_conflict',
                     'race_claim_then_offload_wipes',
                     'race_compute_stale_generation',
                     'race_delete_then_claim_conflict',
                     'race_claim_then_delete_wipes'):
            self.assertIn(name, names)

    def test_areas_in_order(self):
        names = scenarios.names()
        # The bug's table comes first, the last area (cors) last.
        self.assertEqual('allocations_get_unknown', names[0])
        self.assertEqual(scenarios.AREAS[-1].__name__,
                         scenarios.get(names[-1]).func.__module__)

    def test_descriptions(self):
        for name in scenarios.names():
            entry = scenarios.get(name)
            self.assertTrue(entry.description)
            self.assertLessEqual(len(entry.description), 140, name)
