"""Tests for shelvefix.placement.validation."""

import testtools

from shelvefix.placement import errors
from shelvefix.placement import validation

SCHEMA = {'type': 'object', 'properties': {'u': {'type': 'string',
                                                 'format': 'uuid'}},
          'required': ['u'], 'additionalProperties': False}
UUID = '5c1e2a9f-3b7d-4e61-8a1b-1234567890ab'


class ValidationTestCase(testtools.TestCase):

    def test_is_uuid_like(self):
        # Dashes may even be anywhere: uuid.UUID drops them all.
        for good in (UUID, UUID.upper(), UUID.replace('-', ''),
                     '{%s}' % UUID, 'urn:uuid:%s' % UUID,
                     UUID.replace('-', '') + '----'):
            self.assertTrue(validation.is_uuid_like(good), good)
        for bad in ('abc', '', None, 42, UUID[:-1], UUID + 'a'):
            self.assertFalse(validation.is_uuid_like(bad), bad)

    def test_normalize_uuid(self):
        self.assertEqual(UUID, validation.normalize_uuid(
            UUID.upper().replace('-', '')))

    def test_extract_json(self):
        self.assertEqual({'u': UUID.upper()}, validation.extract_json(
            ('{"u": "%s"}' % UUID.upper()).encode(), SCHEMA))

    def test_malformed_json(self):
        exc = self.assertRaises(errors.BadRequest, validation.extract_json,
                                b'{"u": ', SCHEMA)
        self.assertEqual('Malformed JSON: Expecting value: line 1 column 7 '
                         '(char 6)', exc.detail)
        exc = self.assertRaises(errors.BadRequest, validation.extract_json,
                                b'\xff', SCHEMA)
        self.assertTrue(exc.detail.startswith('Malformed JSON: '))

    def test_schema_violation(self):
        exc = self.assertRaises(errors.BadRequest, validation.extract_json,
                                b'{"u": "nope"}', SCHEMA)
        self.assertTrue(exc.detail.startswith(
            "JSON does not validate: 'nope' is not a 'uuid'"), exc.detail)
        self.assertIn("Failed validating 'format' in "
                      "schema['properties']['u']", exc.detail)

    def test_query_uuid_needs_dashes(self):
        validation.validate_query({'u': UUID}, SCHEMA)
        exc = self.assertRaises(errors.BadRequest, validation.validate_query,
                                {'u': UUID.replace('-', '')}, SCHEMA)
        self.assertTrue(exc.detail.startswith(
            'Invalid query string parameters: '), exc.detail)
