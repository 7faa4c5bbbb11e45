"""Tests for shelvefix.placement.handlers.aggregate, over HTTP."""

from shelvefix.tests.unit.placement import base

AGG1 = 'a1a1a1a1-0000-0000-0000-000000000001'
AGG2 = 'a2a2a2a2-0000-0000-0000-000000000002'
CONFLICT = ("Resource provider's generation already changed. Please update "
            "the generation and try again.")


def url(uuid=base.RP1):
    return '/resource_providers/%s/aggregates' % uuid


class AggregatesTestCase(base.PlacementTestCase):

    def setUp(self):
        super(AggregatesTestCase, self).setUp()
        self.make_provider(base.RP1)

    def test_appeared_in_1_1(self):
        self.assertError(self.get(url(), version='1.0'), 404)
        self.assertError(self.put(url(), [AGG1], version='1.0'), 404)
        resp = self.get(url(), version='1.1')
        self.assertStatus(200, resp)
        self.assertEqual({'aggregates': []}, resp.json())

    def test_bare_list_before_1_19(self):
        resp = self.put(url(), [AGG2, AGG1], version='1.18')
        self.assertStatus(200, resp)
        self.assertEqual({'aggregates': [AGG2, AGG1]}, resp.json())
        self.assertEqual(1, self.provider_generation(base.RP1))
        # Listed by id: placement numbers new aggregates in the order of
        # the set of them.
        self.assertEqual({'aggregates': list(set([AGG2, AGG1]) - set())},
                         self.get(url(), version='1.18').json())
        self.assertError(
            self.put(url(), {'aggregates': [AGG1]}, version='1.18'), 400,
            detail="JSON does not validate: {'aggregates': ['%s']} is not "
                   "of type 'array'" % AGG1)

    def test_generation_from_1_19(self):
        resp = self.put(url(), {'aggregates': [AGG1],
                                'resource_provider_generation': 1},
                        version='1.19')
        self.assertStatus(200, resp)
        self.assertEqual({'aggregates': [AGG1],
                          'resource_provider_generation': 2}, resp.json())
        self.assertEqual({'aggregates': [AGG1],
                          'resource_provider_generation': 2},
                         self.get(url(), version='1.19').json())
        resp = self.put(url(), {'aggregates': [],
                                'resource_provider_generation': 1},
                        version='1.23')
        self.assertError(resp, 409, detail=CONFLICT,
                         code='placement.concurrent_update')
        self.assertEqual([AGG1], self.state.get_provider_aggregates(
            base.RP1)[0])
        self.assertError(self.put(url(), [AGG1], version='1.19'), 400,
                         detail="is not of type 'object'")
        self.assertError(
            self.put(url(), {'aggregates': [AGG1]}, version='1.19'), 400,
            detail="'resource_provider_generation' is a required property")

    def test_cache_headers_from_1_15(self):
        self.assertNotIn('Cache-Control', self.get(url(), version='1.14')
                         .headers)
        for resp in (self.get(url(), version='1.15'),
                     self.put(url(), [AGG1], version='1.15')):
            self.assertEqual('no-cache', resp.headers['Cache-Control'])
            self.assertIn('Last-Modified', resp.headers)

    def test_schema_errors(self):
        for body, detail in (([AGG1, AGG1], 'has non-unique elements'),
                             (['nope'], "'nope' is not a 'uuid'"),
                             ([1], "1 is not of type 'string'")):
            self.assertError(self.put(url(), body, version='1.1'), 400,
                             detail=detail)
        self.assertError(self.put(url(), raw='[', version='1.1',
                                  headers={'Content-Type':
                                           'application/json'}),
                         400, detail='Malformed JSON')

    def test_unknown_provider_escapes_before_the_body(self):
        for resp in (self.get(url(base.MISSING), version='1.1'),
                     self.put(url(base.MISSING), raw='[', version='1.1',
                              headers={'Content-Type': 'application/json'})):
            self.assertError(resp, 404, detail='No resource provider with '
                                               'uuid %s found' % base.MISSING)
            self.assertNotIn('vary', resp.headers)

    def test_accept_and_content_type_come_first(self):
        self.assertError(self.put(url(), raw='[]', version='1.0',
                                  headers={'Content-Type': 'text/plain'}),
                         415)
        resp = self.get(url(), version='1.0',
                        headers={'Accept': 'text/html'})
        self.assertStatus(406, resp)
