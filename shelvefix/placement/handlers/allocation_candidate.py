"""``GET /allocation_candidates`` (microversion 1.10 and later).

The query is read as placement reads it: request-wide parameters
(``limit``, ``group_policy``, ``root_required``, ``same_subtree``), then
the request groups in the order their first parameter appears, with
placement's checks and messages at each microversion. The search itself is
:meth:`~shelvefix.placement.objects.candidates.CandidatesMixin.
allocation_candidates`; the answer takes the shape of the microversion:
the list form of allocation requests before 1.12, ``mappings`` from 1.34,
provider summaries with only the requested classes before 1.27, traits
from 1.17 and the tree's uuids from 1.29.
"""

import re

from shelvefix.placement import errors
from shelvefix.placement import exception
from shelvefix.placement.handlers import common
from shelvefix.placement.objects import candidates
from shelvefix.placement import query
from shelvefix.placement import validation
from shelvefix.placement import wsgi

SAME_SUBTREE_VERSION = (1, 36)
NESTED_VERSION = (1, 29)
_KINDS = 'resources|required|member_of|in_tree'
_KEY = re.compile(r'^(%s)(%s)?$' % (_KINDS, query.GROUP_NUMBER_PATTERN))
_KEY_V1_33 = re.compile(r'^(%s)(%s)?$' % (_KINDS, query.GROUP_PATTERN))


def index(req, state):
    """``GET /allocation_candidates``.

    :param req: the request.
    :param state: the placement state.
    :raises: NotFound (before 1.10), NotAcceptable, BadRequest.
    """
    common.require_version(req, (1, 10))
    common.check_accept(req)
    validation.validate_query(req.query, query.list_candidates(
        req.version))
    wide = _request_wide(req)
    groups = _request_groups(req, wide)
    if not wide.group_policy and sum(
            1 for group in groups if group.use_same_provider) > 1:
        raise errors.BadRequest(
            'The "group_policy" parameter is required when specifying more '
            'than one "resources{N}" parameter.')
    try:
        found, summaries = state.allocation_candidates(groups, wide)
    except exception.ResourceClassNotFound as exc:
        raise errors.BadRequest(
            'Invalid resource class in resources parameter: %s' % exc)
    except exception.TraitNotFound as exc:
        raise errors.BadRequest(str(exc))
    requested = set()
    for group in groups:
        requested |= set(group.resources)
    body = {'allocation_requests': _requests(req, found),
            'provider_summaries': _summaries(req, summaries, requested)}
    return common.cache_headers(req, wsgi.json_response(body))


def _request_wide(req):
    limit = req.query_all('limit')
    policy = req.query_all('group_policy')
    required = forbidden = set()
    roots = req.query_all('root_required')
    if roots:
        if len(roots) > 1:
            raise errors.BadRequest(
                "Query parameter 'root_required' may be specified only "
                "once.", code=errors.QUERY_DUPLICATE_KEY)
        names = query.traits_flat(roots[0], allow_forbidden=True)
        forbidden = set(name.lstrip('!') for name in names
                        if name.startswith('!'))
        required = set(name for name in names if not name.startswith('!'))
        conflicts = required & forbidden
        if conflicts:
            raise errors.BadRequest(
                'Conflicting required and forbidden traits found in '
                'root_required: %s' % ', '.join(sorted(conflicts)),
                code=errors.QUERY_BAD_VALUE)
    same_subtrees = []
    for value in req.query_all('same_subtree'):
        suffixes = set(part.strip() for part in value.split(','))
        if '' in suffixes:
            raise errors.BadRequest(
                'Empty string (unsuffixed group) can not be specified in '
                '`same_subtree` ', code=errors.QUERY_BAD_VALUE)
        same_subtrees.append(suffixes)
    return candidates.RequestWide(
        int(limit[0]) if limit else None, policy[0] if policy else None,
        required, forbidden, same_subtrees,
        req.version.matches(NESTED_VERSION))


def _request_groups(req, wide):
    pattern = _KEY_V1_33 if req.version.matches((1, 33)) else _KEY
    found = {}
    for key, value in req.query_pairs:
        match = pattern.match(key)
        if match is None:
            continue
        kind, suffix = match.group(1), match.group(2) or ''
        group = found.setdefault(suffix, {
            'suffix': suffix, 'use_same_provider': bool(suffix),
            'resources': {}, 'required_traits': [],
            'forbidden_traits': set(), 'member_of': [],
            'forbidden_aggs': set(), 'in_tree': None})
        if kind == 'resources':
            group['resources'] = query.resources(value)
        elif kind == 'required':
            group['required_traits'], group['forbidden_traits'] = (
                query.required_params(req, suffix))
        elif kind == 'member_of':
            group['member_of'], group['forbidden_aggs'] = (
                query.member_of_params(req, suffix))
        else:
            group['in_tree'] = query.in_tree(value)
    groups = [candidates.RequestGroup(**fields)
              for fields in found.values()]
    if req.version.matches(SAME_SUBTREE_VERSION):
        _check_same_subtree_groups(groups, wide)
    else:
        _check_orphans(groups)
    if req.version.matches(query.FORBIDDEN_TRAITS_VERSION):
        _check_conflicts(groups)
    return groups


def _check_same_subtree_groups(groups, wide):
    resourceless = [group.suffix for group in groups
                    if not group.resources]
    if len(resourceless) == len(groups):
        raise errors.BadRequest(
            'There must be at least one resources or resources[$S] '
            'parameter.', code=errors.QUERY_MISSING_VALUE)
    named = set().union(*wide.same_subtrees)
    bad = [suffix for suffix in resourceless if suffix not in named]
    if bad:
        raise errors.BadRequest(
            'Resourceless suffixed group request should be specified in '
            '`same_subtree` query param: bad group(s) - %s.' % bad,
            code=errors.QUERY_BAD_VALUE)
    suffixes = [group.suffix for group in groups]
    bad = [suffix for suffix in sorted(named) if suffix not in suffixes]
    if bad:
        raise errors.BadRequest(
            'Real suffixes should be specified in `same_subtree`: %s not '
            'found in %s.' % (bad, suffixes), code=errors.QUERY_BAD_VALUE)


def _check_orphans(groups):
    orphans = ['required%s' % group.suffix for group in groups
               if group.required_traits and not group.resources]
    if orphans:
        raise errors.BadRequest(
            'All traits parameters must be associated with resources.  '
            'Found the following orphaned traits keys: %s'
            % ', '.join(orphans))
    orphans = ['member_of%s' % group.suffix for group in groups
               if not group.resources and (group.member_of or
                                           group.forbidden_aggs)]
    if orphans:
        raise errors.BadRequest(
            'All member_of parameters must be associated with resources. '
            'Found the following orphaned member_of keys: %s'
            % ', '.join(orphans))
    if not all(group.resources for group in groups):
        raise errors.BadRequest('All request groups must specify resources.')
    if not groups:
        raise errors.BadRequest(
            'At least one request group (`resources` or `resources{$S}`) is '
            'required.')


def _check_conflicts(groups):
    conflicts = []
    for group in groups:
        for any_of in group.required_traits:
            if all(name in group.forbidden_traits for name in any_of):
                conflicts.append('required%s: (%s)' % (
                    group.suffix, ', '.join(sorted(any_of))))
    if conflicts:
        raise errors.BadRequest(
            'Conflicting required and forbidden traits found in the '
            'following traits keys: %s' % ', '.join(sorted(conflicts)))


def _requests(req, found):
    if not req.version.matches((1, 12)):
        return [{'allocations': [
            {'resource_provider': {'uuid': provider},
             'resources': resources}
            for provider, resources in candidate.resources.items()]}
            for candidate in found]
    mappings = req.version.matches((1, 34))
    requests = []
    for candidate in found:
        body = {'allocations': {provider: {'resources': resources}
                                for provider, resources
                                in candidate.resources.items()}}
        if mappings:
            body['mappings'] = candidate.mappings
        requests.append(body)
    return requests


def _summaries(req, summaries, requested):
    every_class = req.version.matches((1, 27))
    traits = req.version.matches((1, 17))
    trees = req.version.matches(NESTED_VERSION)
    shown = {}
    for summary in summaries:
        resources = summary.resources
        if not every_class:
            resources = {rc: value for rc, value in resources.items()
                         if rc in requested}
        body = {'resources': resources}
        if traits:
            body['traits'] = summary.traits
        if trees:
            body['parent_provider_uuid'] = summary.parent_provider_uuid
            body['root_provider_uuid'] = summary.root_provider_uuid
        shown[summary.uuid] = body
    return shown
