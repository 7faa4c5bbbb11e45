"""Tests for shelvefix.placement.handlers.resource_provider, over HTTP."""

from shelvefix.tests.unit.placement import base

RPS = '/resource_providers'
DUPLICATE = 'placement.duplicate_name'


def url(uuid):
    return '%s/%s' % (RPS, uuid)


class CreateTestCase(base.PlacementTestCase):

    def test_201_before_1_20(self):
        resp = self.post(RPS, {'name': 'rp1', 'uuid': base.RP1})
        self.assertStatus(201, resp)
        self.assertEqual(b'', resp.content)
        self.assertEqual(self.placement.endpoint + url(base.RP1),
                         resp.headers['Location'])

    def test_200_with_body_from_1_20(self):
        resp = self.post(RPS, {'name': 'rp1', 'uuid': base.RP1.upper()},
                         version='1.20')
        self.assertStatus(200, resp)
        body = resp.json()
        self.assertEqual((base.RP1, 'rp1', 0, None, base.RP1), (
            body['uuid'], body['name'], body['generation'],
            body['parent_provider_uuid'], body['root_provider_uuid']))
        self.assertEqual('no-cache', resp.headers['Cache-Control'])

    def test_duplicates(self):
        self.post(RPS, {'name': 'rp1', 'uuid': base.RP1})
        resp = self.post(RPS, {'name': 'rp1'}, version='1.28')
        self.assertError(resp, 409, code=DUPLICATE,
                         detail='Conflicting resource provider name: rp1 '
                                'already exists.')
        resp = self.post(RPS, {'name': 'rp2', 'uuid': base.RP1},
                         version='1.28')
        self.assertError(resp, 409, code=DUPLICATE,
                         detail='Conflicting resource provider uuid: %s '
                                'already exists.' % base.RP1)

    def test_bad_requests(self):
        self.assertError(self.post(RPS, {'name': 'x', 'uuid': 'nope'}), 400,
                         detail="JSON does not validate: 'nope' is not a "
                                "'uuid'")
        self.assertError(self.post(RPS, {'name': 'x' * 201}), 400,
                         detail='is too long')
        resp = self.post(RPS, {'name': '', 'uuid': base.RP1})
        self.assertError(resp, 400, detail='Unable to create resource '
                         'provider "", %s: Object action create failed '
                         'because: name is required' % base.RP1)
        resp = self.post(RPS, {'name': 'x', 'parent_provider_uuid': None})
        self.assertError(resp, 400, detail="('parent_provider_uuid' was "
                                           "unexpected)")

    def test_parent(self):
        self.post(RPS, {'name': 'root', 'uuid': base.RP1})
        resp = self.post(RPS, {'name': 'child', 'uuid': base.RP2,
                               'parent_provider_uuid': base.RP1},
                         version='1.20')
        self.assertEqual(base.RP1, resp.json()['root_provider_uuid'])
        resp = self.post(RPS, {'name': 'x', 'uuid': base.RP3,
                               'parent_provider_uuid': base.MISSING},
                         version='1.14')
        self.assertError(resp, 400, detail='parent provider UUID does not '
                                           'exist.')


class ReadTestCase(base.PlacementTestCase):

    def setUp(self):
        super(ReadTestCase, self).setUp()
        self.make_provider(base.RP1, 'rp1')
        self.make_provider(base.RP2, 'rp2', inventory={'VCPU': 1})

    def test_links_by_microversion(self):
        for version, rels in ((None, ['self', 'inventories', 'usages']),
                              ('1.1', ['self', 'inventories', 'usages',
                                       'aggregates']),
                              ('1.6', ['self', 'inventories', 'usages',
                                       'aggregates', 'traits']),
                              ('1.11', ['self', 'inventories', 'usages',
                                        'aggregates', 'traits',
                                        'allocations'])):
            body = self.get(url(base.RP1), version=version).json()
            self.assertEqual(rels, [link['rel'] for link in body['links']])
            self.assertNotIn('root_provider_uuid', body)
        self.assertEqual(url(base.RP1) + '/usages', body['links'][2]['href'])
        body = self.get(url(base.RP1), version='1.14').json()
        self.assertEqual(base.RP1, body['root_provider_uuid'])

    def test_unknown_is_404_without_vary(self):
        resp = self.get(url('nope'), version='1.28')
        self.assertError(resp, 404, detail='No resource provider with uuid '
                                           'nope found')
        self.assertNotIn('vary', resp.headers)

    def test_list_and_filters(self):
        def names(query, version='1.14'):
            resp = self.get(RPS + query, version=version)
            self.assertStatus(200, resp)
            return [rp['name'] for rp in resp.json()['resource_providers']]

        self.assertEqual(['rp1', 'rp2'], names(''))
        self.assertEqual(['rp2'], names('?name=rp2'))
        self.assertEqual(['rp1'], names('?uuid=%s' % base.RP1))
        self.assertEqual(['rp1'], names('?resources=VCPU:8,DISK_GB:1'))
        self.assertEqual(['rp1', 'rp2'], names('?resources=VCPU:1'))
        self.assertEqual(['rp2'], names('?in_tree=%s' % base.RP2))
        self.assertEqual([], names('?in_tree=%s' % base.MISSING))

    def test_list_bad_queries(self):
        cases = [
            ('?resources=VCPU:1', '1.3', "('resources' was unexpected)"),
            ('?uuid=bad', None, "'bad' is not a 'uuid'"),
            ('?resources=FOO:1', '1.4', 'Invalid resource class in '
             'resources parameter: No such resource class FOO.'),
            ('?resources=VCPU', '1.4', 'Badly formed resources parameter. '
             'Expected resources query string parameter in form: '
             '?resources=VCPU:2,MEMORY_MB:1024. Got: VCPU.'),
            ('?resources=', '1.4', 'Got: empty string.'),
            ('?resources=VCPU:0', '1.4', 'Requested resource VCPU requires '
             'amount >= 1. Got: 0.'),
            ('?resources=VCPU:x', '1.4', 'Requested resource VCPU expected '
             'positive integer amount. Got: x.'),
        ]
        for query, version, detail in cases:
            self.assertError(self.get(RPS + query, version=version), 400,
                             detail=detail)


class UpdateDeleteTestCase(base.PlacementTestCase):

    def setUp(self):
        super(UpdateDeleteTestCase, self).setUp()
        for uuid, name in ((base.RP1, 'rp1'), (base.RP2, 'rp2'),
                           (base.RP3, 'rp3')):
            self.post(RPS, {'name': name, 'uuid': uuid})

    def test_rename(self):
        resp = self.put(url(base.RP1), {'name': 'new'}, version='1.14')
        self.assertStatus(200, resp)
        self.assertEqual(('new', 0), (resp.json()['name'],
                                      resp.json()['generation']))
        self.assertError(self.put(url(base.RP1), {'name': 'rp2'},
                                  version='1.28'), 409, code=DUPLICATE,
                         detail='Conflicting resource provider rp2 already '
                                'exists.')
        self.assertError(self.put(url(base.MISSING), {'name': 'x'}), 404)

    def test_reparenting_needs_1_37(self):
        self.put(url(base.RP2), {'name': 'rp2',
                                 'parent_provider_uuid': base.RP1},
                 version='1.14')
        self.assertEqual(base.RP1, self.state.get_provider(
            base.RP2).parent_provider_uuid)
        for parent, word in ((base.RP3, 're-parenting'),
                             (None, 'un-parenting')):
            resp = self.put(url(base.RP2), {'name': 'rp2',
                                            'parent_provider_uuid': parent},
                            version='1.36')
            self.assertError(resp, 400, detail='Unable to save resource '
                             'provider %s: Object action update failed '
                             'because: %s a provider is not currently '
                             'allowed.' % (base.RP2, word))
        self.assertStatus(200, self.put(url(base.RP2), {
            'name': 'rp2', 'parent_provider_uuid': base.RP3},
            version='1.37'))
        resp = self.put(url(base.RP3), {'name': 'rp3',
                                        'parent_provider_uuid': base.RP2},
                        version='1.37')
        self.assertError(resp, 400, detail='creating loop in the provider '
                                           'tree is not allowed.')

    def test_delete(self):
        self.put(url(base.RP2), {'name': 'rp2',
                                 'parent_provider_uuid': base.RP1},
                 version='1.14')
        self.assertError(self.delete(url(base.RP1), version='1.28'), 409,
                         code='placement.resource_provider.'
                              'cannot_delete_parent',
                         detail='Unable to delete parent resource provider '
                                '%s: It has child resource providers.'
                                % base.RP1)
        self.placement.set_inventory(base.RP3, {'VCPU': 4})
        self.put_allocations(base.C1, {base.RP3: {'resources': {'VCPU': 1}}})
        self.assertError(self.delete(url(base.RP3), version='1.28'), 409,
                         code='placement.resource_provider.inuse',
                         detail='Unable to delete resource provider %s: '
                                'Resource provider has allocations.'
                                % base.RP3)
        self.assertStatus(204, self.delete(url(base.RP2)))
        self.assertError(self.delete(url(base.RP2)), 404,
                         detail='No resource provider with uuid %s found '
                                'for delete' % base.RP2)


AGG1 = 'a1a1a1a1-0000-0000-0000-000000000001'
AGG2 = 'a2a2a2a2-0000-0000-0000-000000000002'
AVX, SSE = 'HW_CPU_X86_AVX', 'HW_CPU_X86_SSE'


class ListFiltersTestCase(base.PlacementTestCase):
    """member_of and required on GET /resource_providers."""

    def setUp(self):
        super(ListFiltersTestCase, self).setUp()
        # RP1: AGG1, AVX; RP2: AGG1 AGG2, AVX SSE; RP3: nothing.
        for uuid, aggregates, traits in ((base.RP1, [AGG1], [AVX]),
                                         (base.RP2, [AGG1, AGG2],
                                          [AVX, SSE]),
                                         (base.RP3, [], [])):
            self.make_provider(uuid)
            self.put(url(uuid) + '/aggregates', aggregates, version='1.1')
            self.put(url(uuid) + '/traits',
                     {'traits': traits, 'resource_provider_generation': 1},
                     version='1.6')

    def found(self, query, version='latest'):
        resp = self.get(RPS + '?' + query, version=version)
        self.assertStatus(200, resp)
        return [rp['uuid'] for rp in resp.json()['resource_providers']]

    def test_member_of(self):
        self.assertEqual([base.RP1, base.RP2],
                         self.found('member_of=' + AGG1, '1.3'))
        self.assertEqual([base.RP2], self.found(
            'member_of=in:%s,%s' % (AGG2, base.MISSING), '1.3'))
        self.assertEqual([], self.found('member_of=' + base.MISSING, '1.3'))
        self.assertEqual([base.RP2], self.found(
            'member_of=%s&member_of=%s' % (AGG1, AGG2), '1.24'))
        self.assertEqual([base.RP3], self.found('member_of=!' + AGG1,
                                                '1.32'))
        self.assertEqual([base.RP1, base.RP3], self.found(
            'member_of=!in:%s,%s' % (AGG2, base.MISSING), '1.32'))

    def test_member_of_refusals(self):
        for query, version, detail in (
                ('member_of=' + AGG1, '1.2',
                 "Additional properties are not allowed ('member_of'"),
                ('member_of=%s,%s' % (AGG1, AGG2), '1.3',
                 "Multiple values for 'member_of' must be prefixed with "
                 "the 'in:' or '!in:' keyword"),
                ('member_of=nope', '1.3', "Expected 'member_of' parameter "
                 "to contain valid UUID(s). Got: nope"),
                ('member_of=%s&member_of=%s' % (AGG1, AGG2), '1.23',
                 'Multiple member_of parameters are not supported'),
                ('member_of=!' + AGG1, '1.31', 'Forbidden member_of '
                 'parameters are not supported in the specified '
                 'microversion')):
            self.assertError(self.get(RPS + '?' + query, version=version),
                             400, detail=detail)

    def test_required(self):
        self.assertEqual([base.RP1, base.RP2],
                         self.found('required=' + AVX, '1.18'))
        self.assertEqual([base.RP2], self.found(
            'required=%s,%s' % (AVX, SSE), '1.18'))
        self.assertEqual([base.RP1], self.found(
            'required=%s,!%s' % (AVX, SSE), '1.22'))
        self.assertEqual([base.RP2], self.found(
            'required=in:%s,HW_CPU_X86_VMX&required=%s' % (SSE, AVX),
            '1.39'))
        self.assertEqual([base.RP1, base.RP2], self.found(
            'required=%s&required=%s' % (SSE, AVX), '1.38'))

    def test_required_refusals(self):
        for query, version, detail in (
                ('required=' + AVX, '1.17',
                 "Additional properties are not allowed ('required'"),
                ('required=!' + AVX, '1.21', "Expected 'required' parameter "
                 "value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: !"),
                ('required=in:' + AVX, '1.38', "The format "
                 "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since "
                 "microversion 1.39."),
                ('required=CUSTOM_NOPE', '1.18', 'Invalid trait(s) in '
                 '"required" parameter: No such trait(s): CUSTOM_NOPE.'),
                ('required=!CUSTOM_NOPE', '1.22', 'No such trait(s): '
                 'CUSTOM_NOPE.')):
            self.assertError(self.get(RPS + '?' + query, version=version),
                             400, detail=detail)

    def test_empty_answers_before_unknown_classes(self):
        for query in ('member_of=' + base.MISSING,
                      'required=HW_CPU_X86_VMX',
                      'in_tree=' + base.MISSING):
            self.assertEqual([], self.found(query + '&resources=FOO:1'))
        self.assertError(self.get(RPS + '?member_of=!%s&resources=FOO:1'
                                  % AGG1, version='latest'), 400,
                         detail='No such resource class FOO.')
