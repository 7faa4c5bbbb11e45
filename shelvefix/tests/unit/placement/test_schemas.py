"""Tests for shelvefix.placement.schemas."""

import jsonschema
import testtools

from shelvefix.placement import microversion
from shelvefix.placement import query
from shelvefix.placement import schemas

RP = '11111111-1111-1111-1111-111111111111'


def version(minor):
    return microversion.Version(1, minor)


def valid(instance, schema):
    try:
        jsonschema.validate(instance, schema)
    except jsonschema.ValidationError:
        return False
    return True


class SchemasTestCase(testtools.TestCase):

    def test_put_allocations_by_version(self):
        expected = [(0, schemas.ALLOCATIONS_V1_0),
                    (7, schemas.ALLOCATIONS_V1_0),
                    (8, schemas.ALLOCATIONS_V1_8),
                    (12, schemas.ALLOCATIONS_V1_12),
                    (27, schemas.ALLOCATIONS_V1_12),
                    (28, schemas.ALLOCATIONS_V1_28),
                    (34, schemas.ALLOCATIONS_V1_34),
                    (38, schemas.ALLOCATIONS_V1_38),
                    (39, schemas.ALLOCATIONS_V1_38)]
        for minor, schema in expected:
            self.assertIs(schema, schemas.put_allocations(version(minor)))

    def test_post_allocations_and_list_by_version(self):
        self.assertIs(schemas.POST_ALLOCATIONS_V1_13,
                      schemas.post_allocations(version(27)))
        self.assertIs(schemas.POST_ALLOCATIONS_V1_38,
                      schemas.post_allocations(version(39)))
        self.assertIs(query.LIST_PROVIDERS,
                      query.list_providers(version(2)))
        self.assertIs(query.LIST_PROVIDERS_V1_14,
                      query.list_providers(version(17)))

    def test_consumer_generation_rules(self):
        base = {'allocations': {RP: {'resources': {'VCPU': 1}}},
                'project_id': 'p', 'user_id': 'u'}
        self.assertTrue(valid(base, schemas.ALLOCATIONS_V1_12))
        self.assertFalse(valid(base, schemas.ALLOCATIONS_V1_28))
        for generation in (None, 0, 3):
            self.assertTrue(valid(dict(base, consumer_generation=generation),
                                  schemas.ALLOCATIONS_V1_28))
        self.assertFalse(valid(dict(base, consumer_generation=1),
                               schemas.ALLOCATIONS_V1_12))
        empty = dict(base, allocations={})
        self.assertFalse(valid(empty, schemas.ALLOCATIONS_V1_12))
        self.assertTrue(valid(dict(empty, consumer_generation=None),
                              schemas.ALLOCATIONS_V1_28))

    def test_consumer_type_rules(self):
        body = {'allocations': {}, 'project_id': 'p', 'user_id': 'u',
                'consumer_generation': None}
        self.assertFalse(valid(body, schemas.ALLOCATIONS_V1_38))
        self.assertTrue(valid(dict(body, consumer_type='INSTANCE'),
                              schemas.ALLOCATIONS_V1_38))
        self.assertFalse(valid(dict(body, consumer_type='instance'),
                               schemas.ALLOCATIONS_V1_38))
        self.assertFalse(valid(dict(body, consumer_type='INSTANCE'),
                               schemas.ALLOCATIONS_V1_34))

    def test_layout_matches_placement(self):
        # Error details quote schemas; key order is part of the text.
        self.assertEqual(['type', 'properties', 'additionalProperties',
                          'required'], list(schemas.ALLOCATIONS_V1_28))
        self.assertEqual(['allocations', 'project_id', 'user_id',
                          'consumer_generation', 'mappings',
                          'consumer_type'],
                         list(schemas.ALLOCATIONS_V1_38['properties']))
        self.assertEqual(['total', 'resource_class'],
                         schemas.POST_INVENTORY['required'])
        self.assertEqual(['type', 'properties', 'required',
                          'additionalProperties'],
                         list(schemas.ALLOCATIONS_V1_8))
