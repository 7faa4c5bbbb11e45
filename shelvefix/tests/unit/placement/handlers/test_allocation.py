"""Tests for shelvefix.placement.handlers.allocation, over HTTP.

The first test case walks the placement semantics table of
docs/bug-1798688.md row by row.
"""

import threading
import uuid

from shelvefix.tests.unit.placement import base

C1_URL = '/allocations/%s' % base.C1
OLD = {base.RP1: {'resources': base.FLAVOR}}
NEW = {base.RP2: {'resources': base.FLAVOR}}
CONFLICT = 'placement.concurrent_update'


class BugTableTestCase(base.PlacementTestCase):
    """Each row of the bug document's table, at microversion 1.28."""

    def setUp(self):
        super(BugTableTestCase, self).setUp()
        self.make_provider(base.RP1)
        self.make_provider(base.RP2)

    def test_get_unknown_consumer(self):
        resp = self.get(C1_URL, version='1.28')
        self.assertStatus(200, resp)
        self.assertEqual({'allocations': {}}, resp.json())

    def test_get_known_consumer(self):
        self.assertStatus(204, self.put_allocations(base.C1, OLD))
        resp = self.get(C1_URL, version='1.28')
        self.assertEqual({
            'allocations': {base.RP1: {'resources': base.FLAVOR,
                                       'generation': 2}},
            'project_id': 'proj', 'user_id': 'user',
            'consumer_generation': 1}, resp.json())

    def test_put_without_consumer_generation(self):
        resp = self.put(C1_URL, {'allocations': OLD, 'project_id': 'p',
                                 'user_id': 'u'}, version='1.28')
        self.assertError(resp, 400, detail="JSON does not validate: "
                         "'consumer_generation' is a required property")

    def test_put_unknown_consumer_with_generation(self):
        resp = self.put_allocations(base.C1, OLD, generation=1)
        self.assertError(resp, 409, code=CONFLICT,
                         detail='consumer generation conflict - expected '
                                'null but got 1')

    def test_put_known_consumer_stale_generation(self):
        self.put_allocations(base.C1, OLD)
        self.put_allocations(base.C1, NEW, generation=1)
        resp = self.put_allocations(base.C1, OLD, generation=1)
        self.assertError(resp, 409, code=CONFLICT,
                         detail='consumer generation conflict - expected 2 '
                                'but got 1')

    def test_put_empty_deletes_consumer(self):
        self.put_allocations(base.C1, OLD)
        self.assertStatus(204, self.put_allocations(base.C1, {}, 1))
        self.assertEqual({}, self.state.consumers)
        self.assertEqual({'allocations': {}},
                         self.get(C1_URL, version='1.28').json())

    def test_put_empty_unknown_consumer(self):
        self.assertStatus(204, self.put_allocations(base.C1, {}))

    def test_delete_unknown_consumer(self):
        resp = self.delete(C1_URL, version='1.28')
        self.assertError(resp, 404, detail="No allocations for consumer "
                                           "'%s'" % base.C1)

    def test_malformed_json(self):
        resp = self.put(C1_URL, raw='{"allocations": ', version='1.28',
                        headers={'Content-Type': 'application/json'})
        self.assertError(resp, 400, detail='Malformed JSON: Expecting value')

    def test_unsupported_microversion(self):
        error = self.assertError(self.get(C1_URL, version='1.99'), 406,
                                 detail='Invalid microversion')
        self.assertEqual('1.0', error['min_version'])
        self.assertEqual('1.39', error['max_version'])

    def test_every_write_bumps_consumer_and_touched_providers(self):
        self.put_allocations(base.C1, OLD)
        self.assertEqual((1, 2, 1), (
            self.state.consumers[base.C1].generation,
            self.provider_generation(base.RP1),
            self.provider_generation(base.RP2)))
        self.put_allocations(base.C1, dict(OLD, **NEW), 1)
        self.assertEqual((2, 3, 2), (
            self.state.consumers[base.C1].generation,
            self.provider_generation(base.RP1),
            self.provider_generation(base.RP2)))
        # Leaving RP1 for RP2 alone: RP1's generation does not move.
        self.put_allocations(base.C1, NEW, 2)
        self.assertEqual((3, 3, 3), (
            self.state.consumers[base.C1].generation,
            self.provider_generation(base.RP1),
            self.provider_generation(base.RP2)))


class RaceTestCase(base.PlacementTestCase):
    """The interleavings of the bug, replayed as the document states."""

    def setUp(self):
        super(RaceTestCase, self).setUp()
        self.make_provider(base.RP1)
        self.make_provider(base.RP2)
        self.put_allocations(base.C1, OLD)

    def consumer_generation(self):
        return self.get(C1_URL, version='1.28').json().get(
            'consumer_generation')

    def test_scheduler_409_after_compute_frees(self):
        seen = self.consumer_generation()
        self.assertStatus(204, self.put_allocations(base.C1, {}, seen))
        resp = self.put_allocations(base.C1, dict(OLD, **NEW), seen)
        self.assertError(resp, 409, code=CONFLICT,
                         detail='expected null but got 1')

    def test_compute_wipes_new_claim(self):
        self.put_allocations(base.C1, dict(OLD, **NEW),
                             self.consumer_generation())
        self.assertStatus(204, self.put_allocations(
            base.C1, {}, self.consumer_generation()))
        self.assertEqual({}, self.state.allocations_for(base.C1))
        self.assertEqual({'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0},
                         self.state.usages(base.RP2))

    def test_compute_conflicts_after_claim(self):
        compute_saw = self.consumer_generation()
        self.put_allocations(base.C1, dict(OLD, **NEW),
                             self.consumer_generation())
        resp = self.put_allocations(base.C1, {}, compute_saw)
        self.assertError(resp, 409, detail='expected 2 but got 1')

    def test_forced_delete_still_races(self):
        seen = self.consumer_generation()
        self.assertStatus(204, self.delete(C1_URL, version='1.28'))
        self.assertError(self.put_allocations(base.C1, NEW, seen), 409,
                         detail='expected null but got 1')

    def test_corrected_order(self):
        self.put_allocations(base.C1, {}, self.consumer_generation())
        self.assertIsNone(self.consumer_generation())
        self.assertStatus(204, self.put_allocations(base.C1, NEW, None))
        self.assertEqual({base.RP2: base.FLAVOR},
                         self.state.allocations_for(base.C1))


class PutTestCase(base.PlacementTestCase):

    def setUp(self):
        super(PutTestCase, self).setUp()
        self.make_provider(base.RP1)

    def test_capacity_exceeded(self):
        resp = self.put_allocations(
            base.C1, {base.RP1: {'resources': {'VCPU': 9}}})
        self.assertError(resp, 409, code='placement.undefined_code',
                         detail="Unable to allocate inventory: Unable to "
                                "create allocation for 'VCPU' on resource "
                                "provider '%s'. The requested amount would "
                                "exceed the capacity." % base.RP1)
        self.assertEqual({}, self.state.consumers)

    def test_unknown_provider_and_class(self):
        resp = self.put_allocations(
            base.C1, {base.MISSING: {'resources': {'VCPU': 1}}})
        self.assertError(resp, 400, detail="Allocation for resource provider "
                         "'%s' that does not exist." % base.MISSING)
        # Placement keeps the consumer record it created (generation 0).
        resp = self.put_allocations(
            base.C1, {base.RP1: {'resources': {'FOO': 1}}}, 0)
        self.assertError(resp, 400, detail='Unable to allocate inventory '
                         'for consumer %s: No such resource class FOO.'
                         % base.C1)
        resp = self.put_allocations(
            base.C1, {base.RP1: {'resources': {'PCI_DEVICE': 1}}}, 0)
        self.assertError(resp, 409, detail="Unable to allocate inventory: "
                         "Inventory for 'PCI_DEVICE' on resource provider "
                         "'%s' invalid." % base.RP1)

    def test_consumer_uuid_checked_and_normalized(self):
        resp = self.put_allocations('not-a-uuid', {})
        self.assertError(resp, 400, detail='Malformed consumer_uuid: '
                                           'not-a-uuid')
        upper = base.C1.upper().replace('-', '')
        self.assertStatus(204, self.put_allocations(
            upper, {base.RP1: {'resources': {'VCPU': 1}}}))
        self.assertEqual([base.C1], list(self.state.consumers))
        # Reads and deletes use the path as given.
        self.assertEqual({'allocations': {}},
                         self.get('/allocations/%s' % upper).json())
        self.assertStatus(404, self.delete('/allocations/%s' % upper))

    def test_legacy_list_format(self):
        body = {'allocations': [{'resource_provider': {'uuid': base.RP1},
                                 'resources': {'VCPU': 1}}]}
        self.assertStatus(204, self.put(C1_URL, body))
        self.assertEqual({
            'allocations': {base.RP1: {'resources': {'VCPU': 1},
                                       'generation': 2}},
            'project_id': '00000000-0000-0000-0000-000000000000',
            'user_id': '00000000-0000-0000-0000-000000000000'},
            self.get(C1_URL, version='1.12').json())
        self.assertError(self.put(C1_URL, body, version='1.8'), 400,
                         detail="'project_id' is a required property")
        body.update(project_id='p', user_id='u')
        self.assertStatus(204, self.put(C1_URL, body, version='1.8'))

    def test_generation_ignored_before_1_28(self):
        body = {'allocations': OLD, 'project_id': 'p', 'user_id': 'u'}
        for _ in range(3):
            self.assertStatus(204, self.put(C1_URL, body, version='1.27'))
        self.assertEqual(3, self.state.consumers[base.C1].generation)
        self.assertError(self.put(C1_URL, dict(body, allocations={}),
                                  version='1.27'), 400,
                         detail='should be non-empty')

    def test_consumer_type(self):
        resp = self.put_allocations(base.C1, OLD, version='1.38')
        self.assertError(resp, 400, detail="'consumer_type' is a required "
                                           "property")
        self.put_allocations(base.C1, OLD, version='1.37')
        self.assertEqual('unknown', self.get(
            C1_URL, version='1.38').json()['consumer_type'])
        self.put_allocations(base.C1, OLD, 1, version='1.38',
                             consumer_type='INSTANCE', project_id='p2')
        body = self.get(C1_URL, version='1.38').json()
        self.assertEqual(('INSTANCE', 'p2', 2), (
            body['consumer_type'], body['project_id'],
            body['consumer_generation']))

    def test_mappings_from_1_34(self):
        mappings = {'': [base.RP1]}
        self.assertError(self.put_allocations(base.C1, OLD, version='1.33',
                                              mappings=mappings), 400)
        self.assertStatus(204, self.put_allocations(
            base.C1, OLD, version='1.34', mappings=mappings))

    def test_media_type(self):
        resp = self.put(C1_URL, raw='{}', version='1.28',
                        headers={'Content-Type': 'text/plain'})
        self.assertError(resp, 415, detail='The media type text/plain is not '
                                           'supported, use application/json')
        resp = self.request('PUT', C1_URL, version='1.28')
        self.assertError(resp, 415, detail='The request media type None is '
                                           'not supported by this server.')

    def test_fields_by_microversion(self):
        self.put_allocations(base.C1, OLD)
        self.assertEqual(['allocations'], list(self.get(C1_URL).json()))
        self.assertEqual(['allocations', 'project_id', 'user_id'],
                         list(self.get(C1_URL, version='1.27').json()))
        resp = self.get(C1_URL, version='1.15')
        self.assertEqual('no-cache', resp.headers['Cache-Control'])
        self.assertIn('GMT', resp.headers['Last-Modified'])


class PostTestCase(base.PlacementTestCase):

    def setUp(self):
        super(PostTestCase, self).setUp()
        self.make_provider(base.RP1)
        self.make_provider(base.RP2)

    def post_allocations(self, body, version='1.28'):
        return self.post('/allocations', body, version=version)

    def test_several_consumers_atomically(self):
        self.put_allocations(base.C1, OLD)
        resp = self.post_allocations({
            base.C1: base.alloc_body({}, 1),
            base.C2: base.alloc_body(NEW),
        })
        self.assertStatus(204, resp)
        self.assertEqual([base.C2], list(self.state.consumers))
        self.assertEqual((3, 2), (self.provider_generation(base.RP1),
                                  self.provider_generation(base.RP2)))

    def test_failure_changes_nothing(self):
        self.put_allocations(base.C1, OLD)
        resp = self.post_allocations({
            base.C2: base.alloc_body(NEW),
            base.C1: base.alloc_body({}, 7),
        })
        self.assertError(resp, 409, code=CONFLICT,
                         detail='expected 1 but got 7')
        self.assertEqual([base.C1], list(self.state.consumers))
        resp = self.post_allocations({
            base.C2: base.alloc_body(NEW),
            base.C3: base.alloc_body({base.RP2: {'resources': {'VCPU': 7}}}),
        })
        self.assertError(resp, 409, detail='would exceed the capacity')
        self.assertEqual([base.C1], list(self.state.consumers))
        resp = self.post_allocations({
            base.C2: base.alloc_body({base.RP2: {'resources': {'FOO': 1}}})})
        self.assertError(resp, 400, detail='Unable to allocate inventory No '
                                           'such resource class FOO.')

    def test_versions(self):
        body = {base.C1: {'allocations': OLD, 'project_id': 'p',
                          'user_id': 'u'}}
        self.assertError(self.post_allocations(body, '1.12'), 404)
        self.assertStatus(204, self.post_allocations(body, '1.13'))
        self.assertError(self.post_allocations(body, '1.28'), 400,
                         detail="'consumer_generation' is a required")
        self.assertError(self.post_allocations({}, '1.28'), 400,
                         detail='should be non-empty')


class ProviderAllocationsTestCase(base.PlacementTestCase):

    def test_listing(self):
        self.make_provider(base.RP1)
        self.put_allocations(base.C1, {base.RP1: {'resources': {'VCPU': 2}}})
        self.put_allocations(base.C2, {base.RP1: {'resources': {'VCPU': 1}}})
        url = '/resource_providers/%s/allocations' % base.RP1
        self.assertEqual({
            'allocations': {base.C2: {'resources': {'VCPU': 1},
                                      'consumer_generation': 1},
                            base.C1: {'resources': {'VCPU': 2},
                                      'consumer_generation': 1}},
            'resource_provider_generation': 3},
            self.get(url, version='1.28').json())
        self.assertNotIn('consumer_generation', self.get(url).json()[
            'allocations'][base.C1])
        self.assertError(
            self.get('/resource_providers/%s/allocations' % base.MISSING),
            404, detail="Resource provider '%s' not found: No resource "
                        "provider with uuid %s found" % ((base.MISSING,) * 2))


class ConcurrencyTestCase(base.PlacementTestCase):
    """Writers in threads, through HTTP and the transport."""

    def setUp(self):
        super(ConcurrencyTestCase, self).setUp()
        self.make_provider(base.RP1, inventory={'VCPU': 1000})
        self.failures = []

    def run_threads(self, target, count=4):
        threads = [threading.Thread(target=target, args=(n,))
                   for n in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        self.assertEqual([], self.failures)

    def test_four_consumers_in_parallel(self):
        consumers = [str(uuid.UUID(int=n + 1)) for n in range(4)]

        def writer(n):
            generation = None
            for amount in range(1, 11):
                resp = self.put_allocations(
                    consumers[n], {base.RP1: {'resources': {'VCPU': amount}}},
                    generation)
                if resp.status_code != 204:
                    self.failures.append(resp.text)
                    return
                generation = 1 if generation is None else generation + 1

        self.run_threads(writer)
        self.assertEqual({c: 10 for c in consumers},
                         {c: v.generation
                          for c, v in self.state.consumers.items()})
        self.assertEqual(1 + 40, self.provider_generation(base.RP1))
        self.assertEqual(40, len(self.placement.calls_for(
            'PUT', '^/allocations/')))
        self.assertEqual({'VCPU': 40}, dict(self.state.usages(base.RP1)))

    def test_one_consumer_read_modify_write_loses_nothing(self):
        self.put_allocations(base.C1, {base.RP1: {'resources': {'VCPU': 1}}})

        def incrementer(n):
            done = 0
            while done < 5:
                body = self.get(C1_URL, version='1.28').json()
                amount = body['allocations'][base.RP1]['resources']['VCPU']
                resp = self.put_allocations(
                    base.C1,
                    {base.RP1: {'resources': {'VCPU': amount + 1}}},
                    body['consumer_generation'])
                if resp.status_code == 204:
                    done += 1
                elif 'consumer generation conflict' not in resp.text:
                    self.failures.append(resp.text)
                    return

        self.run_threads(incrementer)
        # Every successful write saw the previous one: 1 + 4 * 5.
        self.assertEqual({base.RP1: {'VCPU': 21}},
                         self.state.allocations_for(base.C1))
        self.assertEqual(21, self.state.consumers[base.C1].generation)
        puts = self.placement.calls_for('PUT', '^/allocations/')
        self.assertEqual(21, len([c for c in puts if c.status == 204]))
        self.assertEqual(len(puts) - 21,
                         len([c for c in puts if c.status == 409]))
