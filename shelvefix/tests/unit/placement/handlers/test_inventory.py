"""Tests for shelvefix.placement.handlers.inventory, over HTTP."""

from shelvefix.placement import exception
from shelvefix.tests.unit.placement import base

DEFAULTS = {'reserved': 0, 'min_unit': 1, 'max_unit': 2147483647,
            'step_size': 1, 'allocation_ratio': 1.0}


def url(uuid=base.RP1, resource_class=None):
    path = '/resource_providers/%s/inventories' % uuid
    return path + '/' + resource_class if resource_class else path


def body(generation, **inventories):
    return {'resource_provider_generation': generation,
            'inventories': inventories}


class InventoriesTestCase(base.PlacementTestCase):

    def setUp(self):
        super(InventoriesTestCase, self).setUp()
        self.post('/resource_providers', {'name': 'rp1', 'uuid': base.RP1})

    def test_put_defaults_and_generation(self):
        resp = self.put(url(), body(0, VCPU={'total': 8,
                                             'allocation_ratio': 16}))
        self.assertStatus(200, resp)
        self.assertEqual({'resource_provider_generation': 1,
                          'inventories': {'VCPU': dict(
                              DEFAULTS, total=8, allocation_ratio=16)}},
                         resp.json())
        # Stored as a float column: it reads back as 16.0.
        stored = self.get(url()).json()['inventories']['VCPU']
        self.assertIsInstance(stored['allocation_ratio'], float)
        self.assertEqual(1, self.provider_generation(base.RP1))

    def test_last_modified_only_with_inventories(self):
        resp = self.put(url(), body(0, VCPU={'total': 8}), version='1.15')
        self.assertIn('Last-Modified', resp.headers)
        for resp in (self.put(url(), body(1), version='1.15'),
                     self.get(url(), version='1.15')):
            self.assertStatus(200, resp)
            self.assertNotIn('Last-Modified', resp.headers)
            self.assertEqual('no-cache', resp.headers['Cache-Control'])

    def test_generation_conflict(self):
        self.put(url(), body(0, VCPU={'total': 8}))
        resp = self.put(url(), body(0, VCPU={'total': 4}), version='1.28')
        self.assertError(resp, 409, code='placement.concurrent_update',
                         detail='resource provider generation conflict')
        self.assertEqual(8, self.get(url()).json()['inventories']['VCPU'][
            'total'])

    def test_refusals(self):
        cases = [
            (body(0, VCPU={'total': 8, 'reserved': 8}), '1.25',
             "The reserved value is greater than or equal to total."),
            (body(0, VCPU={'total': 8, 'reserved': 9}), '1.26',
             "The reserved value is greater than total."),
            (body(0, FOO={'total': 8}), '1.26',
             'Unknown resource class in inventory for resource provider '
             '%s: No such resource class FOO.' % base.RP1),
            (body(0, VCPU={'total': 0}), '1.26',
             'JSON does not validate: 0 is less than the minimum of 1'),
            ({'inventories': {}}, '1.26',
             "'resource_provider_generation' is a required property"),
        ]
        for request, version, detail in cases:
            self.assertError(self.put(url(), request, version=version), 400,
                             detail=detail)
        self.assertEqual(0, self.provider_generation(base.RP1))
        self.assertStatus(200, self.put(
            url(), body(0, VCPU={'total': 8, 'reserved': 8}),
            version='1.26'))

    def test_in_use(self):
        self.placement.set_inventory(base.RP1, {'VCPU': 8, 'DISK_GB': 10})
        self.put_allocations(base.C1, {base.RP1: {'resources': {'VCPU': 1}}})
        resp = self.put(url(), body(2, DISK_GB={'total': 10}),
                        version='1.28')
        self.assertError(resp, 409, code='placement.inventory.inuse',
                         detail="update conflict: Inventory for 'VCPU' on "
                                "resource provider '%s' in use." % base.RP1)
        resp = self.delete(url(), version='1.28')
        self.assertError(resp, 409, code='placement.inventory.inuse')
        resp = self.delete(url(resource_class='VCPU'), version='1.28')
        self.assertError(resp, 409, code='placement.concurrent_update',
                         detail='Unable to delete inventory of class VCPU')

    def test_unknown_provider(self):
        self.assertError(self.get(url(base.MISSING)), 404,
                         detail='No resource provider with uuid %s found : '
                                'No resource provider with uuid %s found'
                                % ((base.MISSING,) * 2))
        resp = self.put(url(base.MISSING), body(0), version='1.28')
        self.assertError(resp, 404)
        self.assertNotIn('vary', resp.headers)

    def test_delete_all_from_1_5(self):
        self.placement.set_inventory(base.RP1, {'VCPU': 8})
        resp = self.delete(url(), version='1.4')
        self.assertError(resp, 405, detail='The method DELETE is not '
                                           'allowed for this resource.')
        self.assertStatus(204, self.delete(url(), version='1.5'))
        self.assertEqual(({}, 2), (
            self.get(url()).json()['inventories'],
            self.provider_generation(base.RP1)))


class InventoryTestCase(base.PlacementTestCase):

    def setUp(self):
        super(InventoryTestCase, self).setUp()
        self.make_provider(base.RP1, inventory={'VCPU': 8})

    def test_show(self):
        resp = self.get(url(resource_class='VCPU'), version='1.15')
        self.assertEqual(dict(DEFAULTS, total=8,
                              resource_provider_generation=1), resp.json())
        self.assertIn('Last-Modified', resp.headers)
        self.assertError(self.get(url(resource_class='DISK_GB')), 404,
                         detail='No inventory of class DISK_GB for %s'
                                % base.RP1)

    def test_update(self):
        resp = self.put(url(resource_class='VCPU'),
                        {'resource_provider_generation': 1, 'total': 4})
        self.assertEqual(dict(DEFAULTS, total=4,
                              resource_provider_generation=2), resp.json())
        self.assertError(self.put(url(resource_class='VCPU'), {
            'resource_provider_generation': 1, 'total': 4}), 409,
            detail='resource provider generation conflict')
        self.assertError(self.put(url(resource_class='DISK_GB'), {
            'resource_provider_generation': 2, 'total': 4}), 400,
            detail='No inventory record with resource class for resource '
                   'provider %s: No inventory of class DISK_GB found.'
                   % base.RP1)
        # An unknown class escapes the handler: a plain 404.
        resp = self.put(url(resource_class='vcpu'), {
            'resource_provider_generation': 2, 'total': 4}, version='1.28')
        self.assertError(resp, 404, detail='No such resource class vcpu.')
        self.assertNotIn('vary', resp.headers)

    def test_create_twice_is_the_database_refusing_the_row(self):
        # Placement's 409 carries what sqlite (its fixture's database)
        # and SQLAlchemy say of the refused row: the provider's and the
        # class' internal ids, the values sent, when the insert ran.
        self.post('/resource_providers', {'name': 'rp2', 'uuid': base.RP2})
        self.assertStatus(201, self.post('/resource_classes',
                                         {'name': 'CUSTOM_GOLD'},
                                         version='1.2'))
        inventory = {'resource_class': 'CUSTOM_GOLD', 'total': 5,
                     'reserved': 1, 'max_unit': 4, 'allocation_ratio': 2}
        self.assertStatus(201, self.post(url(base.RP2), inventory))
        inventory['total'] = 6
        detail = self.assertError(self.post(url(base.RP2), inventory),
                                  409)['detail']
        self.assertRegex(detail, (
            r"^There was a conflict when trying to complete your request\."
            r"\n\n Update conflict: \(sqlite3\.IntegrityError\) UNIQUE "
            r"constraint failed: inventories\.resource_provider_id, "
            r"inventories\.resource_class_id \[SQL: INSERT INTO inventories "
            r"\(resource_provider_id, resource_class_id, total, reserved, "
            r"min_unit, max_unit, step_size, allocation_ratio, created_at\) "
            r"VALUES \(\?, \?, \?, \?, \?, \?, \?, \?, \?\)\] "
            r"\[parameters: \(2, 10000, 6, 1, 1, 4, 1, 2\.0, "
            r"'\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}'\)\] "
            r"\(Background on this error at: "
            r"https://sqlalche\.me/e/%s/gkpj\)  $"
            % exception.sqlalchemy_version()))

    def test_create_and_delete_one(self):
        resp = self.post(url(), {'resource_class': 'DISK_GB', 'total': 5})
        self.assertStatus(201, resp)
        self.assertEqual(self.placement.endpoint + url(
            resource_class='DISK_GB'), resp.headers['Location'])
        self.assertEqual(2, resp.json()['resource_provider_generation'])
        self.assertError(self.post(url(), {'resource_class': 'DISK_GB',
                                           'total': 5}), 409,
                         detail='Update conflict')
        self.assertError(self.post(url(), {'resource_class': 'FOO',
                                           'total': 5}), 400,
                         detail='Unable to create inventory for resource '
                                'provider %s: No such resource class FOO.'
                                % base.RP1)
        self.assertStatus(204, self.delete(url(resource_class='DISK_GB')))
        self.assertError(self.delete(url(resource_class='DISK_GB')), 404,
                         detail='No inventory of class DISK_GB found for '
                                'delete: No inventory of class DISK_GB '
                                'found for delete')
        self.assertError(self.delete(url(resource_class='FOO')), 404,
                         detail='No inventory of class FOO found for '
                                'delete: No such resource class FOO.')
        self.assertEqual(3, self.provider_generation(base.RP1))
