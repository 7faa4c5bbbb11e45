"""JSON schemas of request bodies of the placement double, per microversion.

They accept and refuse exactly what placement's schemas do. They are also
*laid out* like placement's (same keys in the same order), because a
validation error's ``detail`` quotes the failing schema verbatim and a
client comparing error text must see placement's text.
"""

import copy

from shelvefix.placement.objects import models

UUID_PATTERN = '^[0-9a-fA-F-]{36}$'
RC_PATTERN = '^[A-Z0-9_]+$'
CONSUMER_TYPE_PATTERN = RC_PATTERN
CONSUMER_TYPE_GET_PATTERN = '%s|^all|^unknown$' % CONSUMER_TYPE_PATTERN
GROUP_PATTERN = '[a-zA-Z0-9_-]{1,64}'
# The largest float the inventory column holds.
FLOAT_MAX = 3.40282e+38


def string(min_length=None, max_length=None, **extra):
    """A string schema (keys in placement's order)."""
    schema = {'type': 'string'}
    schema.update(extra)
    if min_length is not None:
        schema['minLength'] = min_length
    if max_length is not None:
        schema['maxLength'] = max_length
    return schema


def uuid_format():
    """A string in the ``uuid`` format."""
    return {'type': 'string', 'format': 'uuid'}


def _external_id():
    return string(min_length=1, max_length=255)


def _amounts():
    return {'type': 'object', 'minProperties': 1,
            'patternProperties': {RC_PATTERN: {'type': 'integer',
                                               'minimum': 1}},
            'additionalProperties': False}


def _with(schema, required=(), drop_required=(), drop=(), **properties):
    """A deep copy of ``schema`` with properties added or removed."""
    result = copy.deepcopy(schema)
    for name in drop:
        result['properties'].pop(name)
    result['properties'].update(copy.deepcopy(properties))
    result['required'] = [name for name in result['required']
                          if name not in drop_required] + list(required)
    return result


def with_properties(schema, **properties):
    """A deep copy of an object schema with more properties."""
    result = copy.deepcopy(schema)
    result['properties'].update(properties)
    return result


def newest(version, schemas, oldest):
    """The schema of the newest microversion ``version`` matches.

    :param schemas: ``((major, minor), schema)`` pairs, newest first
    :param oldest: the schema below every one of them
    """
    for minimum, schema in schemas:
        if version.matches(minimum):
            return schema
    return oldest


# -- resource providers -----------------------------------------------------

POST_PROVIDER = {
    'type': 'object',
    'properties': {'name': string(max_length=200), 'uuid': uuid_format()},
    'required': ['name'],
    'additionalProperties': False,
}
PUT_PROVIDER = _with(POST_PROVIDER, drop=['uuid'])
_PARENT = {'anyOf': [uuid_format(), {'type': 'null'}]}
POST_PROVIDER_V1_14 = _with(POST_PROVIDER, parent_provider_uuid=_PARENT)
PUT_PROVIDER_V1_14 = _with(POST_PROVIDER_V1_14, drop=['uuid'])


# -- inventories ------------------------------------------------------------

def _bounded(minimum):
    return {'type': 'integer', 'maximum': models.MAX_INT,
            'minimum': minimum}


INVENTORY = {
    'type': 'object',
    'properties': {
        'resource_provider_generation': {'type': 'integer'},
        'total': _bounded(1),
        'reserved': _bounded(0),
        'min_unit': _bounded(1),
        'max_unit': _bounded(1),
        'step_size': _bounded(1),
        'allocation_ratio': {'type': 'number', 'maximum': FLOAT_MAX},
    },
    'required': ['total', 'resource_provider_generation'],
    'additionalProperties': False,
}
POST_INVENTORY = _with(
    INVENTORY, required=['resource_class'],
    drop_required=['resource_provider_generation'],
    resource_class={'type': 'string', 'pattern': RC_PATTERN})
PUT_INVENTORIES = {
    'type': 'object',
    'properties': {
        'resource_provider_generation': {'type': 'integer'},
        'inventories': {
            'type': 'object',
            'patternProperties': {
                RC_PATTERN: _with(
                    INVENTORY,
                    drop_required=['resource_provider_generation']),
            },
        },
    },
    'required': ['resource_provider_generation', 'inventories'],
    'additionalProperties': False,
}

# -- allocations ------------------------------------------------------------

ALLOCATIONS_V1_0 = {
    'type': 'object',
    'properties': {
        'allocations': {
            'type': 'array',
            'minItems': 1,
            'items': {
                'type': 'object',
                'properties': {
                    'resource_provider': {
                        'type': 'object',
                        'properties': {'uuid': uuid_format()},
                        'additionalProperties': False,
                        'required': ['uuid'],
                    },
                    'resources': _amounts(),
                },
                'required': ['resource_provider', 'resources'],
                'additionalProperties': False,
            },
        },
    },
    'required': ['allocations'],
    'additionalProperties': False,
}
ALLOCATIONS_V1_8 = _with(ALLOCATIONS_V1_0, required=['project_id', 'user_id'],
                         project_id=_external_id(), user_id=_external_id())


def _by_provider(min_providers):
    return {
        'type': 'object',
        'minProperties': min_providers,
        'patternProperties': {
            UUID_PATTERN: {
                'type': 'object',
                'properties': {'generation': {'type': 'integer'},
                               'resources': _amounts()},
                'required': ['resources'],
                'additionalProperties': False,
            },
        },
        'additionalProperties': False,
    }


def _dict_allocations(min_providers):
    return {
        'type': 'object',
        'properties': {'allocations': _by_provider(min_providers),
                       'project_id': _external_id(),
                       'user_id': _external_id()},
        'additionalProperties': False,
        'required': ['allocations', 'project_id', 'user_id'],
    }


_NULLABLE_GENERATION = {'type': ['integer', 'null'],
                        'additionalProperties': False}
_MAPPINGS = {
    'type': 'object',
    'minProperties': 1,
    'patternProperties': {
        GROUP_PATTERN: {'type': 'array', 'minItems': 1,
                        'items': uuid_format()},
    },
}
_CONSUMER_TYPE = string(min_length=1, max_length=255,
                        pattern=CONSUMER_TYPE_PATTERN)

ALLOCATIONS_V1_12 = _dict_allocations(1)
# From 1.28 a write may empty a consumer (and must name its generation).
ALLOCATIONS_V1_28 = _with(_dict_allocations(0),
                          required=['consumer_generation'],
                          consumer_generation=_NULLABLE_GENERATION)
ALLOCATIONS_V1_34 = _with(ALLOCATIONS_V1_28, mappings=_MAPPINGS)
ALLOCATIONS_V1_38 = _with(ALLOCATIONS_V1_34, required=['consumer_type'],
                          consumer_type=_CONSUMER_TYPE)


def _post(consumer_schema):
    return {'type': 'object', 'minProperties': 1,
            'additionalProperties': False,
            'patternProperties': {UUID_PATTERN: consumer_schema}}


POST_ALLOCATIONS_V1_13 = _post(_dict_allocations(0))
POST_ALLOCATIONS_V1_28 = _post(ALLOCATIONS_V1_28)
POST_ALLOCATIONS_V1_34 = _post(ALLOCATIONS_V1_34)
POST_ALLOCATIONS_V1_38 = _post(ALLOCATIONS_V1_38)


def put_allocations(version):
    """The body schema of ``PUT /allocations/{consumer}``.

    :param version: the request microversion.
    """
    return newest(version, (((1, 38), ALLOCATIONS_V1_38),
                            ((1, 34), ALLOCATIONS_V1_34),
                            ((1, 28), ALLOCATIONS_V1_28),
                            ((1, 12), ALLOCATIONS_V1_12),
                            ((1, 8), ALLOCATIONS_V1_8)), ALLOCATIONS_V1_0)


def post_allocations(version):
    """The body schema of ``POST /allocations`` (1.13 and later).

    :param version: the request microversion.
    """
    return newest(version, (((1, 38), POST_ALLOCATIONS_V1_38),
                            ((1, 34), POST_ALLOCATIONS_V1_34),
                            ((1, 28), POST_ALLOCATIONS_V1_28)),
                  POST_ALLOCATIONS_V1_13)


# -- aggregates -------------------------------------------------------------

_AGGREGATE_LIST = {'type': 'array', 'items': uuid_format(),
                   'uniqueItems': True}
PUT_AGGREGATES_V1_1 = copy.deepcopy(_AGGREGATE_LIST)
PUT_AGGREGATES_V1_19 = {'type': 'object', 'properties': {
    'aggregates': copy.deepcopy(_AGGREGATE_LIST),
    'resource_provider_generation': {'type': 'integer'}},
    'required': ['aggregates', 'resource_provider_generation'],
    'additionalProperties': False}


# -- resource classes and traits (placement's PUT /resource_classes schema
# is a copy of its POST one) -------------------------------------------------

CUSTOM_NAME_PATTERN = '^CUSTOM_[A-Z0-9_]+$'
RESOURCE_CLASS = {'type': 'object', 'properties': {'name': string(
    max_length=255, pattern=CUSTOM_NAME_PATTERN)}, 'required': ['name'],
    'additionalProperties': False}
TRAIT = string(min_length=1, max_length=255)
CUSTOM_TRAIT = dict(TRAIT, pattern=CUSTOM_NAME_PATTERN)
SET_PROVIDER_TRAITS = {'type': 'object', 'properties': {
    'traits': {'type': 'array', 'items': TRAIT},
    'resource_provider_generation': {'type': 'integer'}},
    'required': ['traits', 'resource_provider_generation'],
    'additionalProperties': False}


# -- the reshaper ------------------------------------------------------------

def _reshaper(allocations):
    # Allocations may be empty here: nothing may be allocated yet from the
    # inventory being moved.
    allocations = copy.deepcopy(allocations)
    allocations['minProperties'] = 0
    return {
        'type': 'object',
        'properties': {
            'inventories': {
                'type': 'object',
                'patternProperties': {
                    UUID_PATTERN: copy.deepcopy(PUT_INVENTORIES)},
                'minProperties': 1,
                'additionalProperties': False,
            },
            'allocations': allocations,
        },
        'required': ['inventories', 'allocations'],
        'additionalProperties': False,
    }


RESHAPER = _reshaper(POST_ALLOCATIONS_V1_28)
RESHAPER_V1_34 = _reshaper(POST_ALLOCATIONS_V1_34)
RESHAPER_V1_38 = _reshaper(POST_ALLOCATIONS_V1_38)


def reshaper(version):
    """The body schema of ``POST /reshaper``.

    :param version: the request microversion.
    """
    return newest(version, (((1, 38), RESHAPER_V1_38),
                            ((1, 34), RESHAPER_V1_34)), RESHAPER)
