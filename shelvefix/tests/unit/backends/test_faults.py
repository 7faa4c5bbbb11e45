"""Tests for shelvefix.backends.faults."""

import json

import testtools

from shelvefix.backends import faults


def fault(method=None, path=None, nth=1, times=1, status=500):
    faults.validate(method, path, nth, status, None, None, 'before', times)
    return faults.Fault(method, path, nth, status, None, None, 'before',
                        times)


class FaultTestCase(testtools.TestCase):

    def test_matches(self):
        armed = fault(method='put', path=r'^/allocations/\w+$')
        self.assertTrue(armed.matches('PUT', '/allocations/abc'))
        self.assertFalse(armed.matches('GET', '/allocations/abc'))
        self.assertFalse(armed.matches('PUT', '/allocations/abc?x=1'))
        self.assertTrue(fault().matches('DELETE', '/anything'))

    def test_count_window(self):
        armed = fault(nth=3, times=2)
        self.assertEqual([False, False, True, True, False],
                         [armed.count() for _ in range(5)])
        self.assertEqual((5, 0), (armed.seen, armed.fired))
        self.assertIn('nth=3 times=2 500', repr(armed))

    def test_validate_accepts_good_arguments(self):
        faults.validate('GET', '/x', 2, None, None, 'timeout', 'after', 3)
        faults.validate(None, None, 1, 409, b'{}', None, 'before', 1)

    def test_validate_messages(self):
        cases = [
            ((None, None, 1, None, None, None, 'before', 1),
             'needs either status or exception'),
            ((None, None, 0, 500, None, None, 'before', 1),
             'nth must be an int >= 1, got 0'),
            ((None, None, 1, 500, None, None, 'later', 1),
             "when must be one of before, after, got 'later'"),
            ((None, '[', 1, 500, None, None, 'before', 1),
             'path must be a regular expression'),
        ]
        for args, message in cases:
            exc = self.assertRaises(ValueError, faults.validate, *args)
            self.assertIn(message, str(exc))

    def test_default_error_body(self):
        document = json.loads(faults.default_error_body(409, 'req-x'))
        self.assertEqual({'errors': [{
            'status': 409, 'title': 'Conflict',
            'detail': 'Injected fault: 409 Conflict',
            'code': 'placement.undefined_code', 'request_id': 'req-x'}]},
            document)
        self.assertEqual('Unknown', faults.reason(599))
