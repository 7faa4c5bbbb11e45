"""Tests for reading placement error documents."""

import json

import requests
import testtools

from shelvefix.scheduler.client import errors
from shelvefix.tests import base


def _response(status, body):
    resp = requests.Response()
    resp.status_code = status
    resp._content = (body if isinstance(body, bytes)
                     else json.dumps(body).encode('utf-8'))
    return resp


def _error(status, code, detail):
    return _response(status, {'errors': [{
        'status': status, 'title': 'Conflict', 'detail': detail,
        'code': code, 'request_id': 'req-1'}]})


class ErrorFromResponseTestCase(base.TestCase):

    def test_placement_error_document(self):
        err = errors.error_from_response(_error(
            409, 'placement.concurrent_update',
            'consumer generation conflict - expected null but got 1'))
        self.assertEqual(409, err.status)
        self.assertEqual('placement.concurrent_update', err.code)
        self.assertEqual(
            'consumer generation conflict - expected null but got 1',
            err.detail)
        self.assertEqual(
            'HTTP 409 placement.concurrent_update: consumer generation '
            'conflict - expected null but got 1', errors.describe(err))

    def test_non_json_body(self):
        err = errors.error_from_response(
            _response(502, b'<html>Bad Gateway</html>'))
        self.assertIsNone(err.code)
        self.assertEqual("a body that is not a placement error document: "
                         "'<html>Bad Gateway</html>'", err.detail)
        self.assertEqual('HTTP 502: ' + err.detail, errors.describe(err))

    def test_json_without_errors_list(self):
        err = errors.error_from_response(_response(500, {'oops': 1}))
        self.assertIsNone(err.code)
        self.assertIn('not a placement error document', err.detail)

    def test_long_body_is_cut(self):
        err = errors.error_from_response(_response(500, b'x' * 1000))
        self.assertIn("'" + 'x' * 200 + "...'", err.detail)
        self.assertNotIn('x' * 201, err.detail)


class ConflictKindTestCase(base.TestCase):

    def _err(self, status, code, detail):
        return errors.PlacementError(status, code, detail, '')

    def test_consumer_generation_conflicts(self):
        for detail in (
                'consumer generation conflict - expected null but got 1',
                'consumer generation conflict - expected 2 but got 1'):
            err = self._err(409, 'placement.concurrent_update', detail)
            self.assertTrue(errors.is_consumer_generation_conflict(err))
            self.assertFalse(errors.is_provider_generation_conflict(err))

    def test_provider_generation_conflict(self):
        err = self._err(409, 'placement.concurrent_update',
                        'resource provider generation conflict')
        self.assertFalse(errors.is_consumer_generation_conflict(err))
        self.assertTrue(errors.is_provider_generation_conflict(err))

    def test_other_errors_are_neither(self):
        for err in (self._err(409, 'placement.undefined_code',
                              'Unable to allocate inventory'),
                    self._err(400, 'placement.concurrent_update',
                              'consumer generation conflict'),
                    self._err(500, None, 'boom')):
            self.assertFalse(errors.is_consumer_generation_conflict(err))
            self.assertFalse(errors.is_provider_generation_conflict(err))


class ExpectedGenerationTestCase(testtools.TestCase):

    def conflict(self, detail):
        return errors.PlacementError(409, errors.CONCURRENT_UPDATE, detail,
                                     '')

    def test_what_placement_holds(self):
        self.assertEqual((True, 1), errors.expected_consumer_generation(
            self.conflict('There was a conflict when trying to complete '
                          'your request. consumer generation conflict - '
                          'expected 1 but got None')))
        self.assertEqual((True, None), errors.expected_consumer_generation(
            self.conflict('consumer generation conflict - expected null '
                          'but got 3')))
        self.assertEqual((False, None), errors.expected_consumer_generation(
            self.conflict('resource provider generation conflict')))

    def test_server_errors(self):
        self.assertTrue(errors.is_server_error(
            errors.PlacementError(503, None, 'x', '')))
        self.assertFalse(errors.is_server_error(self.conflict('x')))
