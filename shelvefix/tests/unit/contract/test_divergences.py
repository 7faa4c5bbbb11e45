"""Divergences the contract suite found in the double, pinned down.

Each test asserts, on the double alone (so it runs without
openstack-placement), the answer real placement 16.0.0 gave where the
double used to answer differently. The contract scenario that caught it
is named in the docstring; it keeps comparing with the real service.
"""

import testtools

from shelvefix.backends import fixture


class HeadErrorTestCase(testtools.TestCase):
    """Errors answering HEAD keep WebOb's default type, with no body.

    Caught by ``head_requests`` and ``method_not_allowed``: WebOb renders
    no error body for HEAD, so placement's answer says ``text/html;
    charset=UTF-8`` whatever ``Accept`` asked for; the double used to
    say ``application/json``.
    """

    def setUp(self):
        super(HeadErrorTestCase, self).setUp()
        self.placement = self.useFixture(fixture.PlacementFixture())

    def head(self, path, **kwargs):
        return self.placement.adapter.request(path, 'HEAD', **kwargs)

    def assertHeadError(self, status, response):
        self.assertEqual(status, response.status_code)
        self.assertEqual('text/html; charset=UTF-8',
                         response.headers['Content-Type'])
        self.assertEqual(b'', response.content)

    def test_method_not_allowed(self):
        response = self.head('/allocations/%s' % ('c' * 32),
                             microversion='1.28',
                             headers={'Accept': 'application/json'})
        self.assertHeadError(405, response)
        self.assertEqual('GET, PUT, DELETE', response.headers['Allow'])

    def test_not_found(self):
        self.assertHeadError(404, self.head('/nothing'))

    def test_bad_and_unacceptable_microversion(self):
        self.assertHeadError(406, self.head('/', microversion='1.40'))
        self.assertHeadError(400, self.head('/', headers={
            'OpenStack-API-Version': 'placement 1.x'}))

    def test_get_errors_still_negotiate(self):
        response = self.placement.adapter.get('/nothing')
        self.assertEqual('application/json',
                         response.headers['Content-Type'])
        self.assertEqual(404, response.json()['errors'][0]['status'])
