"""Tests for shelvefix.placement.handlers.trait, over HTTP."""

from shelvefix.placement.objects import trait
from shelvefix.tests.unit.placement import base

TRAITS = '/traits'
INVALID = ('The trait is invalid. A valid trait must be no longer than 255 '
           'characters, start with the prefix "CUSTOM_" and use following '
           'characters: "A"-"Z", "0"-"9" and "_"')


def url(name):
    return '%s/%s' % (TRAITS, name)


def rp_url(uuid=base.RP1):
    return '/resource_providers/%s/traits' % uuid


class TraitsTestCase(base.PlacementTestCase):

    def test_put_get_delete(self):
        resp = self.put(url('CUSTOM_GOLD'), version='1.6')
        self.assertStatus(201, resp)
        self.assertEqual(self.placement.endpoint + url('CUSTOM_GOLD'),
                         resp.headers['Location'])
        self.assertNotIn('Cache-Control', resp.headers)
        resp = self.put(url('CUSTOM_GOLD'), version='1.15')
        self.assertStatus(204, resp)
        self.assertEqual('no-cache', resp.headers['Cache-Control'])
        self.assertIn('Last-Modified', resp.headers)
        for name in ('CUSTOM_GOLD', 'COMPUTE_NODE'):
            resp = self.get(url(name), version='1.15')
            self.assertStatus(204, resp)
            self.assertIn('Last-Modified', resp.headers)
        self.assertStatus(204, self.delete(url('CUSTOM_GOLD'),
                                           version='1.6'))
        resp = self.get(url('CUSTOM_GOLD'), version='1.6')
        self.assertError(resp, 404, detail='No such trait(s): CUSTOM_GOLD.')
        self.assertIn('vary', resp.headers)

    def test_invalid_names(self):
        for name in ('COMPUTE_NODE', 'CUSTOM_', 'CUSTOM_a',
                     'CUSTOM_' + 'A' * 249):
            resp = self.put(url(name), version='1.6')
            self.assertEqual(INVALID, self.assertError(resp, 400)[
                'detail'].split('\n\n ')[1].strip())
        self.assertEqual(list(trait.STANDARD_TRAITS),
                         self.state.trait_names())

    def test_delete_refusals(self):
        self.put(url('CUSTOM_GOLD'), version='1.6')
        self.make_provider(base.RP1)
        self.put(rp_url(), {'resource_provider_generation': 1,
                            'traits': ['CUSTOM_GOLD']}, version='1.6')
        for name, status, detail in (
                ('CUSTOM_GOLD', 409,
                 'The trait CUSTOM_GOLD is in use by a resource provider.'),
                ('COMPUTE_NODE', 400,
                 'Cannot delete standard trait COMPUTE_NODE.'),
                ('CUSTOM_NOPE', 404, 'No such trait(s): CUSTOM_NOPE.')):
            resp = self.delete(url(name), version='1.23')
            self.assertError(resp, status, detail=detail,
                             code='placement.undefined_code')

    def test_list_filters(self):
        for name in ('CUSTOM_B', 'CUSTOM_A'):
            self.put(url(name), version='1.6')
        resp = self.get(TRAITS, version='1.6')
        self.assertEqual(list(trait.STANDARD_TRAITS) + ['CUSTOM_B',
                                                        'CUSTOM_A'],
                         resp.json()['traits'])
        self.assertNotIn('Cache-Control', resp.headers)
        for query, expected in (
                ('name=in:CUSTOM_B,CUSTOM_A,NOPE', ['CUSTOM_A', 'CUSTOM_B']),
                ('name=startswith:custom', ['CUSTOM_B', 'CUSTOM_A']),
                ('name=startswith:CUSTOM&associated=TRUE', []),
                ('name=startswith:CUSTOM&associated=false',
                 ['CUSTOM_B', 'CUSTOM_A'])):
            resp = self.get('%s?%s' % (TRAITS, query), version='1.15')
            self.assertEqual({'traits': expected}, resp.json(), query)
            self.assertIn('Last-Modified', resp.headers)
        resp = self.get(TRAITS + '?name=other:CUSTOM_A', version='1.6')
        self.assertEqual(len(self.state.trait_names()),
                         len(resp.json()['traits']))

    def test_list_refusals(self):
        for query, detail in (
                ('name=CUSTOM_A', 'Badly formatted name parameter. Expected '
                 'name query string parameter in form: '
                 '?name=[in|startswith]:[name1,name2|prefix]. Got: '
                 '"CUSTOM_A"'),
                ('associated=1', 'The query parameter "associated" only '
                 'accepts "true" or "false"'),
                ('foo=1', "Invalid query string parameters: Additional "
                 "properties are not allowed ('foo' was unexpected)")):
            resp = self.get('%s?%s' % (TRAITS, query), version='1.6')
            self.assertError(resp, 400, detail=detail)

    def test_before_1_6(self):
        for method, path in (('GET', TRAITS), ('GET', url('CUSTOM_A')),
                             ('PUT', url('CUSTOM_A')),
                             ('DELETE', url('CUSTOM_A')),
                             ('GET', rp_url()), ('PUT', rp_url()),
                             ('DELETE', rp_url())):
            resp = self.request(method, path, version='1.5')
            self.assertError(resp, 404)
        self.assertEqual([], self.state.trait_names()[len(
            trait.STANDARD_TRAITS):])


class ProviderTraitsTestCase(base.PlacementTestCase):

    def setUp(self):
        super(ProviderTraitsTestCase, self).setUp()
        self.make_provider(base.RP1, inventory={})
        self.put(url('CUSTOM_GOLD'), version='1.6')

    def set_traits(self, generation, traits, version='1.6'):
        return self.put(rp_url(), {'resource_provider_generation': generation,
                                   'traits': traits}, version=version)

    def test_set_get_and_delete(self):
        resp = self.get(rp_url(), version='1.15')
        self.assertEqual({'traits': [], 'resource_provider_generation': 0},
                         resp.json())
        self.assertIn('Last-Modified', resp.headers)
        resp = self.set_traits(0, ['HW_CPU_X86_SSE', 'CUSTOM_GOLD',
                                   'COMPUTE_NODE'], version='1.15')
        self.assertStatus(200, resp)
        self.assertEqual(
            {'traits': ['COMPUTE_NODE', 'CUSTOM_GOLD', 'HW_CPU_X86_SSE'],
             'resource_provider_generation': 1}, resp.json())
        self.assertEqual('no-cache', resp.headers['Cache-Control'])
        in_id_order = sorted(['HW_CPU_X86_SSE', 'COMPUTE_NODE'],
                             key=trait.STANDARD_TRAITS.index) + [
            'CUSTOM_GOLD']
        self.assertEqual(in_id_order,
                         self.get(rp_url(), version='1.6').json()['traits'])
        self.assertEqual(1, self.set_traits(1, ['COMPUTE_NODE',
                                                'CUSTOM_GOLD',
                                                'HW_CPU_X86_SSE'])
                         .json()['resource_provider_generation'])
        self.assertStatus(204, self.delete(rp_url(), version='1.6'))
        self.assertEqual(set(), self.state._providers[base.RP1].traits)
        self.assertEqual(2, self.provider_generation(base.RP1))

    def test_refusals(self):
        self.set_traits(0, ['COMPUTE_NODE'])
        resp = self.set_traits(0, ['CUSTOM_GOLD'], version='1.23')
        self.assertError(resp, 409, code='placement.concurrent_update',
                         detail="Resource provider's generation already "
                                "changed. Please update the generation and "
                                "try again.")
        resp = self.set_traits(1, ['CUSTOM_NOPE', 'COMPUTE_NODE'])
        self.assertError(resp, 400, detail='No such trait CUSTOM_NOPE')
        resp = self.put(rp_url(), {'traits': []}, version='1.6')
        self.assertError(resp, 400, detail="'resource_provider_generation' "
                                           "is a required property")
        resp = self.set_traits(1, [''])
        self.assertError(resp, 400, detail="'' should be non-empty")
        resp = self.put(rp_url(), raw='x', version='1.6',
                        headers={'Content-Type': 'text/plain'})
        self.assertStatus(415, resp)
        self.assertEqual({'COMPUTE_NODE'},
                         self.state._providers[base.RP1].traits)

    def test_unknown_provider(self):
        resp = self.get(rp_url(base.MISSING), version='1.6')
        self.assertError(resp, 404, detail='No resource provider with uuid '
                         '%s found: No resource provider with uuid %s found'
                         % (base.MISSING, base.MISSING))
        self.assertIn('vary', resp.headers)
        for method in ('PUT', 'DELETE'):
            resp = self.request(method, rp_url(base.MISSING),
                                {'resource_provider_generation': 0,
                                 'traits': []}, version='1.6')
            self.assertError(resp, 404)
            self.assertNotIn('vary', resp.headers)
