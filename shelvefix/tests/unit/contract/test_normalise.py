"""Tests for the contract suite's normaliser."""

import testtools

from shelvefix.contract import normalise

RP = '11111111-2222-3333-4444-555555555555'
OTHER = 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee'
THIRD = '99999999-8888-7777-6666-555555555555'


class CanonicalUuidTestCase(testtools.TestCase):

    def test_spellings(self):
        for text in (RP, RP.upper(), RP.replace('-', ''),
                     RP.replace('-', '').upper()):
            self.assertEqual(RP, normalise.canonical_uuid(text))

    def test_not_a_uuid(self):
        for text in ('x', RP[:-1], RP + '0', 'g' + RP[1:]):
            self.assertRaises(ValueError, normalise.canonical_uuid, text)


class NormaliserTestCase(testtools.TestCase):

    def setUp(self):
        super(NormaliserTestCase, self).setUp()
        self.norm = normalise.Normaliser('http://placement-ab12.test')

    def test_named_uuid(self):
        self.norm.name('rp1', RP)
        self.assertEqual('/resource_providers/<rp1>/usages',
                         self.norm.text('/resource_providers/%s/usages' % RP))

    def test_unnamed_uuids_numbered_in_order_of_first_appearance(self):
        self.norm.name('rp1', RP)
        self.assertEqual(
            '<uuid-1> <rp1> <uuid-2> <uuid-1>',
            self.norm.text('%s %s %s %s' % (OTHER, RP, THIRD, OTHER)))
        # Numbering carries on across calls: one normaliser per run.
        self.assertEqual('<uuid-2>', self.norm.text(THIRD))

    def test_spelling_is_kept(self):
        self.norm.name('c1', OTHER)
        self.assertEqual(
            ['<c1>', '<c1:UPPER>', '<c1:hex>', '<c1:hex:UPPER>',
             '<c1:MixedCase>'],
            [self.norm.text(text) for text in (
                OTHER, OTHER.upper(), OTHER.replace('-', ''),
                OTHER.replace('-', '').upper(), 'AAaaaaaa' + OTHER[8:])])

    def test_request_ids_get_placeholders(self):
        self.assertEqual('req-<uuid-1>', self.norm.text('req-%s' % OTHER))

    def test_hex_inside_longer_hex_is_not_a_uuid(self):
        text = 'f' + RP.replace('-', '')
        self.assertEqual(text, self.norm.text(text))

    def test_renaming_refused(self):
        self.norm.name('rp1', RP)
        self.norm.name('rp1', RP.upper())
        self.assertRaises(ValueError, self.norm.name, 'rp2', RP)
        self.assertRaises(ValueError, self.norm.name, 'rp3', 'nope')

    def test_endpoint(self):
        self.norm.name('rp1', RP)
        self.assertEqual(
            '<endpoint>/resource_providers/<rp1>',
            self.norm.text('http://placement-ab12.test/resource_providers/%s'
                           % RP))
        self.assertEqual(
            'http://x/', normalise.Normaliser().text('http://x/'))

    def test_value(self):
        self.norm.name('rp1', RP)
        document = {
            'errors': [{'status': 409, 'title': 'Conflict',
                        'detail': 'There was a conflict.\n\n  expected '
                                  '1 but got %s  ' % OTHER,
                        'code': 'placement.concurrent_update',
                        'request_id': 'req-%s' % THIRD}],
            'allocations': {RP: {'resources': {'VCPU': 2},
                                 'generation': 3}},
            'ratio': 16.0, 'flag': True, 'none': None,
            'name': 'two  spaces kept'}
        self.assertEqual({
            'errors': [{'status': 409, 'title': 'Conflict',
                        'detail': 'There was a conflict. expected 1 but '
                                  'got <uuid-1>',
                        'code': 'placement.concurrent_update'}],
            'allocations': {'<rp1>': {'resources': {'VCPU': 2},
                                      'generation': 3}},
            'ratio': 16.0, 'flag': True, 'none': None,
            'name': 'two  spaces kept'}, self.norm.value(document))

    def test_a_database_time_in_a_detail_is_a_placeholder(self):
        detail = ("Update conflict: [parameters: (2, 0, 1, 1.0, "
                  "'2026-12-05 06:17:06.870760')]")
        self.assertEqual(
            {'detail': "Update conflict: [parameters: (2, 0, 1, 1.0, "
                       "'<db-time>')]",
             'name': '2026-12-05 06:17:06.870760'},
            self.norm.value({'detail': detail,
                             'name': '2026-12-05 06:17:06.870760'}))

    def test_value_keeps_json_types(self):
        value = self.norm.value({'a': 16.0, 'b': 16, 'c': True})
        self.assertIsInstance(value['a'], float)
        self.assertIsInstance(value['b'], int)
        self.assertIs(True, value['c'])

    def test_headers(self):
        self.norm.name('rp1', RP)
        headers = {
            'Content-Type': 'application/json',
            'Content-Length': '12',
            'Date': 'Mon, 30 Nov 2026 00:53:21 GMT',
            'Last-Modified': 'Mon, 30 Nov 2026 00:53:21 GMT',
            'x-openstack-request-id': 'req-%s' % OTHER,
            'Location': 'http://placement-ab12.test/resource_providers/%s'
                        % RP,
            'OpenStack-API-Version': 'placement 1.28',
            'Vary': 'openstack-api-version',
            'Allow': 'GET, PUT, DELETE'}
        self.assertEqual({
            'allow': 'GET, PUT, DELETE',
            'content-type': 'application/json',
            'last-modified': '<http-date>',
            'location': '<endpoint>/resource_providers/<rp1>',
            'openstack-api-version': 'placement 1.28',
            'vary': 'openstack-api-version',
            'x-openstack-request-id': '<request-id>'},
            self.norm.headers(headers))
        self.assertEqual(['allow', 'content-type'], list(self.norm.headers(
            [('Content-Type', 'a'), ('Allow', 'b')])))

    def test_body(self):
        self.assertIsNone(self.norm.body(b''))
        self.assertEqual({'allocations': {}},
                         self.norm.body(b'{"allocations": {}}'))
        self.assertEqual(
            '<html> <body> <h1>404 Not Found</h1> <uuid-1> </body> </html>',
            self.norm.body(('<html>\n <body>\n  <h1>404 Not Found</h1>\n'
                            '  %s\n </body>\n</html>' % OTHER).encode()))
        self.assertEqual('\ufffd', self.norm.body(b'\xff'))


class CandidatesTestCase(testtools.TestCase):
    """Allocation candidates are compared in placement's order."""

    def body(self, requests, traits):
        return {'allocation_requests': requests,
                'provider_summaries': {'<a>': {'resources': {},
                                               'traits': traits}}}

    def test_order_kept(self):
        one = {'allocations': {'<a>': {}}, 'mappings': {'': ['<b>', '<a>']}}
        two = {'allocations': {'<b>': {}}, 'mappings': {'': ['<b>']}}
        path = '/allocation_candidates?resources=VCPU:1'
        first = normalise.candidates(self.body([one, two], ['B', 'A']), path)
        second = normalise.candidates(
            self.body([dict(two), dict(one, mappings={'': ['<a>', '<b>']})],
                      ['A', 'B']), path)
        self.assertNotEqual(first, second)
        self.assertEqual([one, two], first['allocation_requests'])
        self.assertEqual(['<b>', '<a>'],
                         first['allocation_requests'][0]['mappings'][''])
        self.assertEqual(['B', 'A'],
                         first['provider_summaries']['<a>']['traits'])

    def test_limit_compares_the_candidates_kept(self):
        requests = [{'allocations': {'<a>': {}}}]
        body = normalise.candidates(self.body(requests, []),
                                    '/allocation_candidates?limit=1')
        self.assertEqual(requests, body['allocation_requests'])

    def test_other_answers_untouched(self):
        body = {'errors': [{'detail': 'x'}]}
        self.assertIs(body, normalise.candidates(
            body, '/allocation_candidates?x'))
        body = self.body([], ['B', 'A'])
        self.assertEqual(['B', 'A'], normalise.candidates(
            body, '/resource_providers')['provider_summaries']['<a>']
            ['traits'])
