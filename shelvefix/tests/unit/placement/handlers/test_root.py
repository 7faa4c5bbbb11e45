"""Tests for shelvefix.placement.handlers.root, over HTTP."""

from shelvefix.tests.unit.placement import base


class RootTestCase(base.PlacementTestCase):

    def test_version_document(self):
        for path in ('/', ''):
            resp = self.get(self.placement.endpoint + path)
            self.assertStatus(200, resp)
            version = resp.json()['versions'][0]
            self.assertEqual(('v1.0', '1.0', '1.39', 'CURRENT'), (
                version['id'], version['min_version'],
                version['max_version'], version['status']))

    def test_cache_headers_from_1_15(self):
        self.assertNotIn('Cache-Control', self.get('/', '1.14').headers)
        resp = self.get('/', '1.15')
        self.assertEqual('no-cache', resp.headers['Cache-Control'])
        self.assertTrue(resp.headers['Last-Modified'].endswith('GMT'))
