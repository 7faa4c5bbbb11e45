"""Query-string parameters of placement's searches, parsed as placement does.

``GET /resource_providers`` and ``GET /allocation_candidates`` take the
same kinds of filter: ``resources``, ``required`` (traits), ``member_of``
(aggregates) and ``in_tree``; allocation candidates take them per request
group (``resources1``, ``required_NIC``...). Each function here reads one
kind and answers a malformed value with placement's 400 and its exact
detail. What is allowed depends on the microversion: forbidden traits
(``!T``) from 1.22, several ``member_of`` from 1.24, forbidden aggregates
(``!agg``, ``!in:``) from 1.32, any-of traits (``in:A,B``) and repeated
``required`` from 1.39.
"""

import copy

from shelvefix.placement import errors
from shelvefix.placement import schemas
from shelvefix.placement import validation

FORBIDDEN_TRAITS_VERSION = (1, 22)
MULTI_MEMBER_OF_VERSION = (1, 24)
FORBIDDEN_AGGREGATES_VERSION = (1, 32)
ANY_TRAITS_VERSION = (1, 39)

_RESOURCES_FORM = ('Badly formed resources parameter. Expected resources '
                   'query string parameter in form: '
                   '?resources=VCPU:2,MEMORY_MB:1024. Got: %s.')


def resources(text):
    """``{resource_class: amount}`` from ``VCPU:2,MEMORY_MB:1024``.

    :param text: the parameter's value.
    :raises BadRequest: empty, malformed, or an amount below 1.
    """
    if not text.strip():
        raise errors.BadRequest(_RESOURCES_FORM % 'empty string')
    amounts = {}
    for item in text.split(','):
        try:
            name, amount = item.split(':')
        except ValueError:
            raise errors.BadRequest(_RESOURCES_FORM % item)
        try:
            amount = int(amount)
        except ValueError:
            raise errors.BadRequest(
                'Requested resource %s expected positive integer amount. '
                'Got: %s.' % (name, amount))
        if amount < 1:
            raise errors.BadRequest(
                'Requested resource %s requires amount >= 1. Got: %d.'
                % (name, amount))
        amounts[name] = amount
    return amounts


def traits(value, allow_forbidden=False, allow_any=False):
    """Required and forbidden traits from one ``required`` value.

    :param value: ``A,!B`` or (with ``allow_any``) ``in:A,B``.
    :param allow_forbidden: whether ``!TRAIT`` is allowed.
    :param allow_any: whether the ``in:`` form is allowed.
    :returns: ``(required, forbidden)``: a list of sets, each set any-of,
        the list all-of; and a set of forbidden names.
    :raises BadRequest: a form the version does not allow, an empty name.
    """
    if value.startswith('in:'):
        if not allow_any:
            raise errors.BadRequest(
                "Invalid query string parameters: The format "
                "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since "
                "microversion 1.39. Got: %s" % value)
        any_of = set(name.strip() for name in value[3:].split(','))
        if not all(any_of):
            raise errors.BadRequest(
                "Invalid query string parameters: Expected 'required' "
                "parameter value of the form: in:HW_CPU_X86_VMX,"
                "CUSTOM_MAGIC. Got an empty trait in: %s" % value)
        if any(name.startswith('!') for name in any_of):
            raise errors.BadRequest(
                "Invalid query string parameters: The format "
                "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support "
                "forbidden traits. Got: %s" % value)
        return [any_of], set()
    names = [name.strip() for name in value.split(',')]
    # Any number of leading '!' is one '!' (placement's documented quirk).
    forbidden = set(name.lstrip('!') for name in names
                    if name.startswith('!'))
    if not all(names) or not all(forbidden):
        form = ('HW_CPU_X86_VMX,!CUSTOM_MAGIC' if allow_forbidden
                else 'HW_CPU_X86_VMX,CUSTOM_MAGIC')
        raise errors.BadRequest(
            "Invalid query string parameters: Expected 'required' parameter "
            "value of the form: %s. Got an empty trait in: %s"
            % (form, value))
    if forbidden and not allow_forbidden:
        raise errors.BadRequest(
            "Invalid query string parameters: Expected 'required' parameter "
            "value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: %s"
            % value)
    required = [{name} for name in names if not name.startswith('!')]
    return required, forbidden


def traits_flat(value, allow_forbidden=False):
    """The names of one ``required`` value, ``!`` kept on forbidden ones.

    The older, flat form (no ``in:``), as ``root_required`` reads it.

    :param value: the parameter's value.
    :param allow_forbidden: whether ``!TRAIT`` is allowed.
    :returns: a set of names, forbidden ones prefixed with ``!``.
    """
    required, forbidden = traits(value, allow_forbidden)
    return (set(next(iter(any_of)) for any_of in required) |
            set('!' + name for name in forbidden))


def required_params(req, suffix=''):
    """Every ``required<suffix>`` of a request, combined.

    Before 1.39 only the last one counts; from 1.39 they are all ANDed.

    :param req: the request.
    :param suffix: the request group suffix ('' for the unsuffixed one).
    :returns: ``(required, forbidden)`` as :func:`traits` gives them.
    """
    allow_any = req.version.matches(ANY_TRAITS_VERSION)
    values = req.query_all('required' + suffix)
    if not allow_any:
        values = values[-1:]
    required, forbidden = [], set()
    for value in values:
        more_required, more_forbidden = traits(
            value, req.version.matches(FORBIDDEN_TRAITS_VERSION), allow_any)
        required += more_required
        forbidden |= more_forbidden
    return required, forbidden


def member_of(value):
    """Required and forbidden aggregates from one ``member_of`` value.

    :param value: ``agg``, ``in:agg1,agg2``, ``!agg`` or ``!in:agg1,agg2``.
    :returns: ``(required, forbidden)``: a set of which one is needed, a
        set of which none may be.
    :raises BadRequest: several values without ``in:``, or not UUIDs.
    """
    if ',' in value and not value.startswith(('in:', '!in:')):
        raise errors.BadRequest(
            "Multiple values for 'member_of' must be prefixed with the "
            "'in:' or '!in:' keyword using the valid microversion. Got: %s"
            % value)
    required = forbidden = set()
    if value.startswith('!in:'):
        forbidden = set(value[4:].split(','))
    elif value.startswith('!'):
        forbidden = {value[1:]}
    elif value.startswith('in:'):
        required = set(value[3:].split(','))
    else:
        required = {value}
    for aggregate in sorted(required | forbidden):
        if not validation.is_uuid_like(aggregate):
            raise errors.BadRequest(
                "Invalid query string parameters: Expected 'member_of' "
                "parameter to contain valid UUID(s). Got: %s" % aggregate)
    return required, forbidden


def member_of_params(req, suffix=''):
    """Every ``member_of<suffix>`` of a request, combined.

    :param req: the request.
    :param suffix: the request group suffix.
    :returns: ``(required, forbidden)``: a list of sets (each any-of, the
        list all-of) and a set of forbidden aggregates.
    :raises BadRequest: several before 1.24, a forbidden form before 1.32.
    """
    name = 'member_of' + suffix
    values = req.query_all(name)
    if len(values) > 1 and not req.version.matches(MULTI_MEMBER_OF_VERSION):
        raise errors.BadRequest(
            'Multiple %s parameters are not supported' % name)
    required, forbidden = [], set()
    for value in values:
        any_of, none_of = member_of(value)
        if any_of:
            required.append(any_of)
        if none_of:
            if not req.version.matches(FORBIDDEN_AGGREGATES_VERSION):
                raise errors.BadRequest(
                    'Forbidden %s parameters are not supported in the '
                    'specified microversion' % name)
            forbidden |= none_of
    return required, forbidden


def in_tree(value):
    """The provider uuid of an ``in_tree`` value (stripped).

    :raises BadRequest: not a UUID.
    """
    uuid = value.strip()
    if not validation.is_uuid_like(uuid):
        raise errors.BadRequest(
            "Invalid query string parameters: Expected 'in_tree' parameter "
            "to be a format of uuid. Got: %s" % value)
    return uuid


# -- the schemas of query strings ------------------------------------------
# Laid out like placement's, since a validation error quotes its schema.

GROUP_NUMBER_PATTERN = '[1-9][0-9]*'
GROUP_PATTERN = schemas.GROUP_PATTERN
_TEXT_LIST = {'type': ['string']}
_with = schemas.with_properties

LIST_PROVIDERS = {
    'type': 'object',
    'properties': {'name': schemas.string(), 'uuid': schemas.uuid_format()},
    'additionalProperties': False,
}
LIST_PROVIDERS_V1_3 = _with(LIST_PROVIDERS, member_of=schemas.string())
LIST_PROVIDERS_V1_4 = _with(LIST_PROVIDERS_V1_3, resources=schemas.string())
LIST_PROVIDERS_V1_14 = _with(LIST_PROVIDERS_V1_4,
                             in_tree=schemas.uuid_format())
LIST_PROVIDERS_V1_18 = _with(LIST_PROVIDERS_V1_14,
                             required=schemas.string())


def list_providers(version):
    """The query schema of ``GET /resource_providers``.

    :param version: the request microversion.
    """
    return schemas.newest(version, (((1, 18), LIST_PROVIDERS_V1_18),
                                    ((1, 14), LIST_PROVIDERS_V1_14),
                                    ((1, 4), LIST_PROVIDERS_V1_4),
                                    ((1, 3), LIST_PROVIDERS_V1_3)),
                          LIST_PROVIDERS)


USAGES_V1_9 = {
    'type': 'object',
    'properties': {'project_id': schemas.string(min_length=1,
                                                max_length=255),
                   'user_id': schemas.string(min_length=1, max_length=255)},
    'required': ['project_id'],
    'additionalProperties': False,
}
USAGES_V1_38 = _with(USAGES_V1_9, consumer_type=schemas.string(
    min_length=1, max_length=255,
    pattern=schemas.CONSUMER_TYPE_GET_PATTERN))

LIST_TRAITS = {'type': 'object', 'properties': {
    'name': schemas.string(), 'associated': schemas.string()},
    'additionalProperties': False}

LIST_CANDIDATES = {
    'type': 'object',
    'properties': {'resources': schemas.string()},
    'required': ['resources'],
    'additionalProperties': False,
}
LIST_CANDIDATES_V1_16 = _with(LIST_CANDIDATES, limit={
    'type': ['integer', 'string'], 'pattern': '^[1-9][0-9]*$',
    'minimum': 1, 'minLength': 1})
LIST_CANDIDATES_V1_17 = _with(LIST_CANDIDATES_V1_16,
                              required=copy.deepcopy(_TEXT_LIST))
LIST_CANDIDATES_V1_21 = _with(LIST_CANDIDATES_V1_17,
                              member_of=copy.deepcopy(_TEXT_LIST))


def _grouped(group_pattern, names):
    return dict(('^%s(%s)?$' % (name, group_pattern), schemas.string())
                for name in names)


# From 1.25 resources, required and member_of may carry a group suffix.
LIST_CANDIDATES_V1_25 = copy.deepcopy(LIST_CANDIDATES_V1_21)
for _name in ('resources', 'required', 'member_of'):
    del LIST_CANDIDATES_V1_25['properties'][_name]
del LIST_CANDIDATES_V1_25['required']
LIST_CANDIDATES_V1_25['patternProperties'] = _grouped(
    GROUP_NUMBER_PATTERN, ('resources', 'required', 'member_of'))
LIST_CANDIDATES_V1_25['properties']['group_policy'] = schemas.string(
    enum=['none', 'isolate'])
LIST_CANDIDATES_V1_31 = copy.deepcopy(LIST_CANDIDATES_V1_25)
LIST_CANDIDATES_V1_31['patternProperties'].update(
    _grouped(GROUP_NUMBER_PATTERN, ('in_tree',)))
LIST_CANDIDATES_V1_33 = copy.deepcopy(LIST_CANDIDATES_V1_31)
LIST_CANDIDATES_V1_33['patternProperties'] = _grouped(
    GROUP_PATTERN, ('resources', 'required', 'member_of', 'in_tree'))
LIST_CANDIDATES_V1_35 = _with(LIST_CANDIDATES_V1_33,
                              root_required=copy.deepcopy(_TEXT_LIST))
LIST_CANDIDATES_V1_36 = _with(LIST_CANDIDATES_V1_35,
                              same_subtree=copy.deepcopy(_TEXT_LIST))


def list_candidates(version):
    """The query schema of ``GET /allocation_candidates``.

    :param version: the request microversion.
    """
    return schemas.newest(version, (((1, 36), LIST_CANDIDATES_V1_36),
                                    ((1, 35), LIST_CANDIDATES_V1_35),
                                    ((1, 33), LIST_CANDIDATES_V1_33),
                                    ((1, 31), LIST_CANDIDATES_V1_31),
                                    ((1, 25), LIST_CANDIDATES_V1_25),
                                    ((1, 21), LIST_CANDIDATES_V1_21),
                                    ((1, 17), LIST_CANDIDATES_V1_17),
                                    ((1, 16), LIST_CANDIDATES_V1_16)),
                          LIST_CANDIDATES)
