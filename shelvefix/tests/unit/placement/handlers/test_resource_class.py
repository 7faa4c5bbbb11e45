"""Tests for shelvefix.placement.handlers.resource_class, over HTTP."""

import os_resource_classes

from shelvefix.tests.unit.placement import base

RCS = '/resource_classes'


def url(name):
    return '%s/%s' % (RCS, name)


def serialized(name):
    return {'name': name, 'links': [{'rel': 'self', 'href': url(name)}]}


class ReadTestCase(base.PlacementTestCase):

    def test_list_standard_then_custom(self):
        self.post(RCS, {'name': 'CUSTOM_GOLD'}, version='1.2')
        resp = self.get(RCS, version='1.2')
        self.assertStatus(200, resp)
        self.assertEqual(
            {'resource_classes': [
                serialized(name) for name in
                list(os_resource_classes.STANDARDS) + ['CUSTOM_GOLD']]},
            resp.json())
        self.assertNotIn('Last-Modified', resp.headers)

    def test_cache_headers_from_1_15(self):
        self.post(RCS, {'name': 'CUSTOM_GOLD'}, version='1.2')
        for path in (RCS, url('VCPU'), url('CUSTOM_GOLD')):
            resp = self.get(path, version='1.15')
            self.assertStatus(200, resp)
            self.assertEqual('no-cache', resp.headers['Cache-Control'])
            self.assertIn('Last-Modified', resp.headers)
            resp = self.get(path, version='1.14')
            self.assertNotIn('Cache-Control', resp.headers)

    def test_show(self):
        resp = self.get(url('DISK_GB'), version='1.2')
        self.assertStatus(200, resp)
        self.assertEqual(serialized('DISK_GB'), resp.json())

    def test_unknown_is_a_plain_404(self):
        resp = self.get(url('CUSTOM_NOPE'), version='1.23')
        self.assertError(resp, 404, code='placement.undefined_code',
                         detail='No such resource class CUSTOM_NOPE.')
        self.assertNotIn('vary', resp.headers)

    def test_before_1_2(self):
        for method, path in (('GET', RCS), ('POST', RCS),
                             ('GET', url('VCPU')), ('PUT', url('VCPU')),
                             ('DELETE', url('VCPU'))):
            resp = self.request(method, path, version='1.1')
            self.assertEqual('The resource could not be found.\n\n   ',
                             self.assertError(resp, 404)['detail'])

    def test_accept(self):
        resp = self.get(RCS, version='1.2', headers={'Accept': 'text/html'})
        self.assertStatus(406, resp)


class CreateTestCase(base.PlacementTestCase):

    def test_201_with_location(self):
        resp = self.post(RCS, {'name': 'CUSTOM_GOLD'}, version='1.2')
        self.assertStatus(201, resp)
        self.assertEqual(b'', resp.content)
        self.assertNotIn('Content-Type', resp.headers)
        self.assertEqual(self.placement.endpoint + url('CUSTOM_GOLD'),
                         resp.headers['Location'])
        self.assertEqual(10000, self.state.class_id('CUSTOM_GOLD'))

    def test_duplicate(self):
        self.post(RCS, {'name': 'CUSTOM_GOLD'}, version='1.2')
        resp = self.post(RCS, {'name': 'CUSTOM_GOLD'}, version='1.23')
        self.assertError(resp, 409, code='placement.undefined_code',
                         detail='Conflicting resource class already '
                                'exists: CUSTOM_GOLD')

    def test_bad_requests(self):
        for name, detail in (
                ('VCPU', "'VCPU' does not match '^CUSTOM_[A-Z0-9_]+$'"),
                ('CUSTOM_a', "does not match"),
                ('CUSTOM_' + 'A' * 249, 'is too long')):
            resp = self.post(RCS, {'name': name}, version='1.2')
            self.assertError(resp, 400, detail=detail)
        resp = self.post(RCS, raw='x', version='1.2',
                         headers={'Content-Type': 'text/plain'})
        self.assertStatus(415, resp)
        self.assertEqual(list(os_resource_classes.STANDARDS),
                         self.state.resource_classes)


class UpdateTestCase(base.PlacementTestCase):

    def setUp(self):
        super(UpdateTestCase, self).setUp()
        self.post(RCS, {'name': 'CUSTOM_GOLD'}, version='1.2')
        self.post(RCS, {'name': 'CUSTOM_SILVER'}, version='1.2')

    def test_rename_up_to_1_6(self):
        self.make_provider(base.RP1, inventory={'CUSTOM_GOLD': 4})
        resp = self.put(url('CUSTOM_GOLD'), {'name': 'CUSTOM_PLATINUM'},
                        version='1.6')
        self.assertStatus(200, resp)
        self.assertEqual(serialized('CUSTOM_PLATINUM'), resp.json())
        self.assertNotIn('Cache-Control', resp.headers)
        self.assertEqual(['CUSTOM_PLATINUM'], list(
            self.state.get_provider(base.RP1).inventories))

    def test_rename_refusals(self):
        cases = [
            ('CUSTOM_GOLD', {'name': 'CUSTOM_SILVER'}, 409,
             'Resource class already exists: CUSTOM_SILVER'),
            ('VCPU', {'name': 'CUSTOM_VCPU'}, 400,
             'Cannot update standard resource class VCPU'),
            ('CUSTOM_GOLD', {'name': 'VCPU'}, 400,
             "'VCPU' does not match"),
            ('CUSTOM_NOPE', {'name': 'CUSTOM_X'}, 404,
             'No such resource class CUSTOM_NOPE.'),
        ]
        for name, data, status, detail in cases:
            resp = self.put(url(name), data, version='1.2')
            self.assertError(resp, status, detail=detail)
        resp = self.put(url('CUSTOM_GOLD'), version='1.6')
        self.assertStatus(415, resp)

    def test_create_or_confirm_from_1_7(self):
        resp = self.put(url('CUSTOM_BRONZE'), version='1.7')
        self.assertStatus(201, resp)
        self.assertEqual(self.placement.endpoint + url('CUSTOM_BRONZE'),
                         resp.headers['Location'])
        resp = self.put(url('CUSTOM_BRONZE'), {'name': 'CUSTOM_X'},
                        version='1.15')
        self.assertStatus(204, resp)
        self.assertEqual(self.placement.endpoint + url('CUSTOM_BRONZE'),
                         resp.headers['Location'])
        self.assertNotIn('Cache-Control', resp.headers)
        self.assertEqual(['CUSTOM_GOLD', 'CUSTOM_SILVER', 'CUSTOM_BRONZE'],
                         self.state.resource_classes[-3:])

    def test_name_checked_as_json_from_1_7(self):
        resp = self.put(url('VCPU'), version='1.7')
        self.assertError(resp, 400, detail="'VCPU' does not match")
        resp = self.put(url('CUSTOM_A%22'), version='1.7')
        self.assertError(resp, 400, detail="Malformed JSON: Expecting ',' "
                                           "delimiter")


class DeleteTestCase(base.PlacementTestCase):

    def test_delete(self):
        self.post(RCS, {'name': 'CUSTOM_GOLD'}, version='1.2')
        self.make_provider(base.RP1, inventory={'CUSTOM_GOLD': 4})
        resp = self.delete(url('CUSTOM_GOLD'), version='1.23')
        self.assertError(resp, 409, code='placement.undefined_code',
                         detail='Error in delete resource class: Cannot '
                                'delete resource class CUSTOM_GOLD. Class '
                                'is in use in inventory.')
        resp = self.delete(url('VCPU'), version='1.2')
        self.assertError(resp, 400, detail='Error in delete resource class: '
                         'Cannot delete standard resource class VCPU.')
        self.delete('/resource_providers/%s/inventories' % base.RP1,
                    version='1.5')
        resp = self.delete(url('CUSTOM_GOLD'), version='1.2')
        self.assertStatus(204, resp)
        self.assertNotIn('CUSTOM_GOLD', self.state.resource_classes)
        resp = self.delete(url('CUSTOM_GOLD'), version='1.2')
        self.assertError(resp, 404,
                         detail='No such resource class CUSTOM_GOLD.')
        self.assertNotIn('vary', resp.headers)
