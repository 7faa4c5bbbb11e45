"""Request body and query validation, with placement's error messages.

A body that is not JSON answers ``Malformed JSON: <json error>``, one that
breaks the schema ``JSON does not validate: <jsonschema error>``, a bad
query string ``Invalid query string parameters: <jsonschema error>``. The
jsonschema error text is whatever the installed jsonschema library prints,
as it is in placement.
"""

import json
import uuid

import jsonschema

from shelvefix.placement import errors
from shelvefix import utils


def is_uuid_like(value):
    """Whether ``value`` is a UUID in any spelling ``uuid.UUID`` reads.

    Upper case, missing dashes, braces and a ``urn:uuid:`` prefix are all
    accepted, as placement accepts them.

    :param value: the candidate.
    """
    try:
        canonical = str(uuid.UUID(value)).replace('-', '')
    except (TypeError, ValueError, AttributeError):
        return False
    spelled = (value.replace('urn:', '').replace('uuid:', '').strip('{}')
               .replace('-', '').lower())
    return canonical == spelled


def normalize_uuid(value):
    """The canonical (lower case, dashed) spelling of a UUID.

    :param value: a UUID-like string.
    """
    return str(uuid.UUID(value))


# Bodies use a format checker whose "uuid" is is_uuid_like (lenient);
# query strings use jsonschema's stock checker, whose "uuid" wants the
# dashes. That difference is placement's.
_BODY_FORMATS = jsonschema.FormatChecker()
_BODY_FORMATS.checks('uuid')(is_uuid_like)
_QUERY_FORMATS = jsonschema.FormatChecker()

# jsonschema.validate() checks the schema itself against the metaschema on
# every call, which costs far more than validating a request. Validators
# are built (and schemas checked) once per schema and format checker; the
# error raised is the one jsonschema.validate() would raise (best_match).
_VALIDATORS = {}
_VALIDATORS_LOCK = utils.AnyThreadRLock()


def _validator(schema, format_checker):
    key = (id(schema), id(format_checker))
    with _VALIDATORS_LOCK:
        entry = _VALIDATORS.get(key)
        if entry is None or entry[0] is not schema:
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
            entry = (schema, cls(schema, format_checker=format_checker))
            _VALIDATORS[key] = entry
        return entry[1]


def _validate(data, schema, format_checker):
    error = jsonschema.exceptions.best_match(
        _validator(schema, format_checker).iter_errors(data))
    if error is not None:
        raise error


def extract_json(body, schema):
    """Parse a JSON request body and validate it.

    :param body: the raw body, bytes.
    :param schema: the JSON schema it must satisfy.
    :returns: the parsed document.
    :raises BadRequest: malformed JSON or a schema violation.
    """
    try:
        data = json.loads(body.decode('utf-8'))
    except ValueError as exc:
        raise errors.BadRequest('Malformed JSON: %s' % exc)
    try:
        _validate(data, schema, _BODY_FORMATS)
    except jsonschema.ValidationError as exc:
        raise errors.BadRequest('JSON does not validate: %s' % exc)
    return data


def validate_query(params, schema):
    """Validate query parameters against a schema.

    :param params: the parameters, a dict of strings.
    :param schema: the JSON schema.
    :raises BadRequest: a schema violation.
    """
    try:
        _validate(params, schema, _QUERY_FORMATS)
    except jsonschema.ValidationError as exc:
        raise errors.BadRequest('Invalid query string parameters: %s' % exc)
