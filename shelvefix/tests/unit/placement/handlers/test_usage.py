"""Tests for shelvefix.placement.handlers.usage, over HTTP."""

from shelvefix.tests.unit.placement import base


class ProviderUsagesTestCase(base.PlacementTestCase):

    def test_usages(self):
        self.make_provider(base.RP1)
        self.put_allocations(base.C1, {base.RP1: {'resources': base.FLAVOR}})
        self.put_allocations(base.C2, {base.RP1: {'resources': {'VCPU': 1}}})
        resp = self.get('/resource_providers/%s/usages' % base.RP1)
        self.assertEqual({'resource_provider_generation': 3,
                          'usages': {'VCPU': 3, 'MEMORY_MB': 1024,
                                     'DISK_GB': 10}}, resp.json())
        self.assertError(
            self.get('/resource_providers/%s/usages' % base.MISSING), 404,
            detail='No resource provider with uuid %s found: No resource '
                   'provider with uuid %s found' % ((base.MISSING,) * 2))


class TotalUsagesTestCase(base.PlacementTestCase):

    def setUp(self):
        super(TotalUsagesTestCase, self).setUp()
        self.make_provider(base.RP1)
        self.put_allocations(base.C1, {base.RP1: {'resources': {'VCPU': 1}}},
                             version='1.38', consumer_type='INSTANCE')
        self.put_allocations(base.C2, {base.RP1: {'resources': {'VCPU': 2}}},
                             user_id='other')
        self.put_allocations(base.C3, {base.RP1: {'resources': {'VCPU': 4}}},
                             project_id='elsewhere')

    def usages(self, query, version='1.38'):
        resp = self.get('/usages?' + query, version=version)
        self.assertStatus(200, resp)
        return resp.json()['usages']

    def test_before_1_38(self):
        self.assertEqual({'VCPU': 3}, self.usages('project_id=proj', '1.9'))
        self.assertEqual({'VCPU': 1}, self.usages(
            'project_id=proj&user_id=user', '1.37'))
        self.assertError(self.get('/usages?project_id=proj', version='1.8'),
                         404)

    def test_grouped_by_consumer_type(self):
        self.assertEqual({'INSTANCE': {'VCPU': 1, 'consumer_count': 1},
                          'unknown': {'VCPU': 2, 'consumer_count': 1}},
                         self.usages('project_id=proj'))
        self.assertEqual({'all': {'VCPU': 3, 'consumer_count': 2}},
                         self.usages('project_id=proj&consumer_type=all'))
        self.assertEqual({'unknown': {'VCPU': 2, 'consumer_count': 1}},
                         self.usages('project_id=proj&consumer_type=unknown'))
        self.assertEqual({}, self.usages('project_id=nobody'))

    def test_bad_queries(self):
        for query, version, detail in (
                ('', '1.9', "'project_id' is a required property"),
                ('project_id=p&consumer_type=x', '1.9',
                 "Additional properties are not allowed ('consumer_type' "
                 "was unexpected)"),
                ('project_id=p&consumer_type=bad', '1.38',
                 "'bad' does not match"),
                ('project_id=', '1.38', "'' should be non-empty")):
            self.assertError(self.get('/usages?' + query, version=version),
                             400, detail='Invalid query string parameters: '
                                         + detail)
