"""Tests for the contract runner: playing scenarios and comparing them.

Everything here runs on the double alone; comparing the double with
itself must agree, and comparing it with a deliberately broken double
must not - the comparison has to be able to fail.
"""

import collections
from unittest import mock

import fixtures
import testtools

from shelvefix.backends import fixture
from shelvefix.contract import api as api_mod
from shelvefix.contract import normalise
from shelvefix.contract import registry
from shelvefix.contract import runner
from shelvefix.contract import scenarios
from shelvefix.placement import deploy
from shelvefix.placement import errors


def _obs(**overrides):
    values = dict(index=1, method='PUT', path='/allocations/<c1>',
                  version='1.28', sent={'allocations': {}}, note=None,
                  status=409,
                  headers={'content-type': 'application/json',
                           'vary': 'openstack-api-version'},
                  body={'errors': [{
                      'status': 409, 'title': 'Conflict',
                      'detail': 'consumer generation conflict - expected '
                                'null but got 1',
                      'code': 'placement.concurrent_update'}]})
    values.update(overrides)
    return api_mod.Observation(**values)


def _transcript(backend, observations, error=None):
    return runner.Transcript('example', backend, list(observations), 0.1,
                             0.05, error)


class CompareTestCase(testtools.TestCase):

    def compare(self, double_obs, real_obs, double_error=None,
                real_error=None):
        return runner.compare(_transcript('double', double_obs, double_error),
                              _transcript('real', real_obs, real_error))

    def test_identical(self):
        self.assertEqual([], self.compare([_obs(), _obs(index=2)],
                                          [_obs(), _obs(index=2)]))

    def test_status_change_is_reported(self):
        (diff,) = self.compare([_obs()], [_obs(status=400)])
        self.assertEqual(
            (1, 'PUT /allocations/<c1> @1.28', 'status', 409, 400,
             'double', 'real'), tuple(diff))
        self.assertEqual(
            '#1 PUT /allocations/<c1> @1.28: status: double 409, real 400',
            str(diff))

    def test_detail_change_is_reported(self):
        body = _obs().body
        changed = {'errors': [dict(body['errors'][0],
                                   detail='consumer generation conflict - '
                                          'expected 0 but got 1')]}
        (diff,) = self.compare([_obs()], [_obs(body=changed)])
        self.assertEqual('body.errors[0].detail', diff.field)
        self.assertEqual('consumer generation conflict - expected null but '
                         'got 1', diff.value_a)
        self.assertIn('expected 0 but got 1', str(diff))

    def test_whitespace_of_detail_is_not_a_difference(self):
        norm = normalise.Normaliser()
        a = norm.body(b'{"errors": [{"detail": "a  b\\n c", '
                      b'"request_id": "req-1"}]}')
        b = norm.body(b'{"errors": [{"detail": "a b c ", '
                      b'"request_id": "req-2"}]}')
        self.assertEqual([], self.compare([_obs(body=a)], [_obs(body=b)]))

    def test_code_change_is_reported(self):
        body = _obs().body
        changed = {'errors': [dict(body['errors'][0],
                                   code='placement.undefined_code')]}
        (diff,) = self.compare([_obs()], [_obs(body=changed)])
        self.assertEqual(('body.errors[0].code', 'placement.concurrent_update',
                          'placement.undefined_code'),
                         (diff.field, diff.value_a, diff.value_b))

    def test_headers(self):
        headers = dict(_obs().headers)
        del headers['vary']
        headers['allow'] = 'GET'
        diffs = self.compare([_obs()], [_obs(headers=headers)])
        self.assertEqual(
            [('header allow', runner.ABSENT, 'GET'),
             ('header vary', 'openstack-api-version', runner.ABSENT)],
            [(d.field, d.value_a, d.value_b) for d in diffs])
        self.assertIn('header vary: double "openstack-api-version", real '
                      '<absent>', str(diffs[1]))
        self.assertEqual('<absent>', diffs[1].as_dict()['value_b'])

    def test_body_types_are_strict(self):
        diffs = self.compare(
            [_obs(body={'ratio': 16.0, 'n': 1, 'list': [1, 2]})],
            [_obs(body={'ratio': 16, 'n': True, 'list': [1], 'extra': 0})])
        self.assertEqual(
            [('body.ratio', 16.0, 16), ('body.n', 1, True),
             ('body.list[1]', 2, runner.ABSENT),
             ('body.extra', runner.ABSENT, 0)],
            [(d.field, d.value_a, d.value_b) for d in diffs])

    def test_whole_body_difference(self):
        (diff,) = self.compare([_obs(body=None)], [_obs(body='<html/>')])
        self.assertEqual(('body', None, '<html/>'),
                         (diff.field, diff.value_a, diff.value_b))

    def test_request_differences(self):
        diffs = self.compare(
            [_obs()],
            [_obs(path='/allocations/<c2>', sent={'allocations': None})])
        self.assertEqual(['request', 'request body'],
                         [d.field for d in diffs])
        self.assertEqual('PUT /allocations/<c2> @1.28', diffs[0].value_b)

    def test_extra_requests_and_errors(self):
        diffs = self.compare([_obs(), _obs(index=2, version=None)], [_obs()],
                             real_error='KeyError: consumer_generation')
        self.assertEqual(
            [(2, 'request', 'PUT /allocations/<c1>', runner.ABSENT),
             (None, 'error', None, 'KeyError: consumer_generation')],
            [(d.index, d.field, d.value_a, d.value_b) for d in diffs])
        self.assertEqual("scenario: error: double null, real "
                         "\"KeyError: consumer_generation\"", str(diffs[1]))
        diffs = self.compare([_obs()], [_obs(), _obs(index=2)])
        self.assertEqual([(2, runner.ABSENT, 'PUT /allocations/<c1> @1.28')],
                         [(d.index, d.value_a, d.value_b) for d in diffs])

    def test_same_error_on_both_sides_still_differs(self):
        diffs = self.compare([], [], double_error='E: x', real_error='E: x')
        self.assertEqual(['error'], [d.field for d in diffs])


class RunScenarioTestCase(testtools.TestCase):

    def test_transcript(self):
        transcript = runner.run_scenario('allocations_get_unknown', 'double')
        self.assertEqual(('allocations_get_unknown', 'double', None),
                         (transcript.scenario, transcript.backend,
                          transcript.error))
        self.assertEqual([200] * 4,
                         [o.status for o in transcript.observations])
        self.assertGreater(transcript.wall_time, 0)
        self.assertLessEqual(transcript.request_time, transcript.wall_time)

    def test_double_agrees_with_itself(self):
        # Every scenario, twice on the double: scenarios are deterministic
        # and the normaliser hides nothing that varies between runs.
        disagreeing = []
        for name in scenarios.names():
            first = runner.run_scenario(name, 'double')
            second = runner.run_scenario(name, 'double')
            self.assertIsNone(first.error, name)
            self.assertTrue(first.observations, name)
            differences = runner.compare(first, second)
            if differences:
                disagreeing.append((name, [str(d) for d in differences]))
        self.assertEqual([], disagreeing)

    def test_changed_detail_phrase_is_caught(self):
        good = runner.run_scenario('allocations_put_wrong_generation',
                                   'double')
        with mock.patch.object(errors.Conflict, 'explanation',
                               'Someone else got there first.'):
            bad = runner.run_scenario('allocations_put_wrong_generation',
                                      'double')
        diffs = runner.compare(bad, good)
        self.assertEqual(['body.errors[0].detail'] * 3,
                         [d.field for d in diffs])
        self.assertTrue(diffs[0].value_a.startswith('Someone else'))

    def test_changed_status_is_caught(self):
        good = runner.run_scenario('allocations_delete_unknown', 'double')
        with mock.patch.object(errors.NotFound, 'status', 410):
            bad = runner.run_scenario('allocations_delete_unknown', 'double')
        diffs = runner.compare(bad, good)
        self.assertIn(('status', 410, 404),
                      [(d.field, d.value_a, d.value_b) for d in diffs])

    def test_scenario_exception_is_recorded(self):
        table = collections.OrderedDict(registry._SCENARIOS)
        self.useFixture(fixtures.MockPatchObject(registry, '_SCENARIOS',
                                                 table))

        @registry.scenario('crashes', 'reads a member that is not there')
        def crashes(api):
            response = api.request('GET', '/allocations/%s' % api.uuid('c1'),
                                   version='1.28')
            response.json()['consumer_generation']

        transcript = runner.run_scenario('crashes', 'double')
        self.assertEqual("KeyError: 'consumer_generation'", transcript.error)
        self.assertEqual(1, len(transcript.observations))
        result = runner.run_all(backends=('double',), names=['crashes'])
        self.assertEqual(['error'],
                         [d.field for d in result.scenarios[0].differences])

    def test_scenario_config_reaches_the_backend(self):
        table = collections.OrderedDict(registry._SCENARIOS)
        self.useFixture(fixtures.MockPatchObject(registry, '_SCENARIOS',
                                                 table))
        origin = 'http://valid.example.com'

        @registry.scenario('with_cors', 'CORS configured',
                           config={'cors': {'allowed_origin': [origin]}})
        def with_cors(api):
            api.request('GET', '/', headers={'Origin': origin})

        (observation,) = runner.run_scenario('with_cors',
                                             'double').observations
        self.assertEqual(origin,
                         observation.headers['access-control-allow-origin'])
        (observation,) = runner.run_scenario('cors_not_configured',
                                             'double').observations[-1:]
        self.assertNotIn('access-control-allow-origin', observation.headers)

    def test_bad_arguments(self):
        self.assertRaises(scenarios.UnknownScenario, runner.run_scenario,
                          'nope', 'double')
        self.assertRaises(ValueError, runner.run_scenario,
                          'allocations_get_unknown', 'nope')
        self.assertRaises(scenarios.UnknownScenario, runner.run_all,
                          ('double',), ['allocations_get_unknown', 'nope'])
        self.assertRaises(ValueError, runner.run_all, ())
        self.assertRaises(ValueError, runner.run_all, ('double', 'nope'))

    def test_run_all_subset_and_totals(self):
        names = ['allocations_delete', 'allocations_get_known']
        with mock.patch.dict(runner.backends_mod.FACTORIES,
                             {'double2': fixture.PlacementFixture}):
            result = runner.run_all(('double', 'double2'), names)
        self.assertEqual(('double', 'double2'), result.backends)
        self.assertEqual(names, [r.name for r in result.scenarios])
        self.assertEqual(result.scenarios, result.agreeing)
        self.assertEqual([], result.disagreeing)
        for backend in ('double', 'double2'):
            self.assertAlmostEqual(
                sum(r.transcripts[backend].wall_time
                    for r in result.scenarios),
                result.wall_time[backend])
            self.assertLess(result.request_time[backend],
                            result.wall_time[backend])
        self.assertRaises(ValueError, runner.run_all, ('double', 'double'))

    def test_run_all_reports_a_broken_backend(self):
        class BrokenApp(deploy.PlacementApp):
            """Forgets the Vary header on every answer."""

            def __call__(self, environ, start_response):
                def filtered(status, headers, exc_info=None):
                    headers = [(k, v) for k, v in headers
                               if k.lower() != 'vary']
                    return start_response(status, headers, exc_info)
                return super(BrokenApp, self).__call__(environ, filtered)

        def broken_fixture(conf):
            return fixture.PlacementFixture(app=BrokenApp(), conf=conf)

        with mock.patch.dict(runner.backends_mod.FACTORIES,
                             {'broken': broken_fixture}):
            result = runner.run_all(('double', 'broken'),
                                    ['allocations_get_unknown'])
        (item,) = result.disagreeing
        self.assertEqual(4, len(item.differences))
        self.assertEqual(
            {('header vary', 'openstack-api-version', runner.ABSENT,
              'double', 'broken')},
            {tuple(d)[2:] for d in item.differences})
