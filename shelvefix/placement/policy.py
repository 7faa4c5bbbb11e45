"""Placement's default policy, as its ``noauth2`` deployment enforces it.

Three parts:

* :func:`credentials` - what placement's ``noauth2`` middleware and
  oslo.context make of a request: the token is ``user[:project]`` (the
  project defaults to the user), the roles are the comma-separated
  ``X-Roles`` header when there is one, else ``admin`` for the user
  ``admin`` and none for anybody else; ``X-Project-Id`` overrides the
  token's project, ``OpenStack-System-Scope`` makes the token system
  scoped and ``X-Domain-Id`` domain scoped;
* :data:`RULES` - placement's default rules (``placement/policies``), as
  oslo.policy check strings (``role:``, ``rule:``, ``key:%(target)s``,
  ``and``, ``or``, ``not``, parentheses), evaluated by :class:`Enforcer`;
* :data:`ROUTE_POLICIES` - the policy of every route and method, and the
  request checks placement makes *before* it asks the policy (its handler
  decorators: ``Accept``, ``Content-Type``, microversion floor), so that a
  refused request fails on the same check as in placement.

The defaults allow an admin or a service everywhere and a project reader
only ``GET /usages`` of its own project. Every placement rule is project
scoped: a system or domain scoped token is refused whatever its roles,
with a detail naming only the policy. Placement registers its rules with
deprecated ``role:admin`` alternatives; oslo.policy ORs those in unless
``[oslo_policy] enforce_new_defaults`` is set, and placement's own test
fixture (which the ``real`` backend runs) unsets it. The only visible
difference: with the new defaults alone an admin may not reshape.
"""

from shelvefix.placement import errors
from shelvefix.placement.handlers import common

ADMIN_OR_SERVICE = 'rule:admin_or_service_api'
SERVICE = 'rule:service_api'
ADMIN_OR_PROJECT_READER_OR_SERVICE = (
    'rule:admin_or_project_reader_or_service_api')
# The deprecated check string of every base rule but admin_api.
DEPRECATED_ADMIN = 'role:admin'

BASE_RULES = {
    'admin_api': 'role:admin',
    'service_api': 'role:service',
    'admin_or_service_api': 'role:admin or role:service',
    'project_reader_api': 'role:reader and project_id:%(project_id)s',
    'admin_or_project_reader_or_service_api':
        'role:admin or rule:project_reader_api or role:service',
}
DEPRECATED_BASE_RULES = ('service_api', 'admin_or_service_api',
                         'project_reader_api',
                         'admin_or_project_reader_or_service_api')

RP_LIST = 'placement:resource_providers:list'
RP_CREATE = 'placement:resource_providers:create'
RP_SHOW = 'placement:resource_providers:show'
RP_UPDATE = 'placement:resource_providers:update'
RP_DELETE = 'placement:resource_providers:delete'
RC_LIST = 'placement:resource_classes:list'
RC_CREATE = 'placement:resource_classes:create'
RC_SHOW = 'placement:resource_classes:show'
RC_UPDATE = 'placement:resource_classes:update'
RC_DELETE = 'placement:resource_classes:delete'
INVENTORY_LIST = 'placement:resource_providers:inventories:list'
INVENTORY_CREATE = 'placement:resource_providers:inventories:create'
INVENTORY_SHOW = 'placement:resource_providers:inventories:show'
INVENTORY_UPDATE = 'placement:resource_providers:inventories:update'
INVENTORY_DELETE = 'placement:resource_providers:inventories:delete'
AGGREGATE_LIST = 'placement:resource_providers:aggregates:list'
AGGREGATE_UPDATE = 'placement:resource_providers:aggregates:update'
PROVIDER_USAGES = 'placement:resource_providers:usages'
TOTAL_USAGES = 'placement:usages'
TRAIT_LIST = 'placement:traits:list'
TRAIT_SHOW = 'placement:traits:show'
TRAIT_UPDATE = 'placement:traits:update'
TRAIT_DELETE = 'placement:traits:delete'
RP_TRAIT_LIST = 'placement:resource_providers:traits:list'
RP_TRAIT_UPDATE = 'placement:resource_providers:traits:update'
RP_TRAIT_DELETE = 'placement:resource_providers:traits:delete'
ALLOCATION_MANAGE = 'placement:allocations:manage'
ALLOCATION_LIST = 'placement:allocations:list'
ALLOCATION_UPDATE = 'placement:allocations:update'
ALLOCATION_DELETE = 'placement:allocations:delete'
RP_ALLOCATION_LIST = 'placement:resource_providers:allocations:list'
CANDIDATE_LIST = 'placement:allocation_candidates:list'
RESHAPE = 'placement:reshaper:reshape'

# Every API rule is project scoped and defaults to a base rule.
API_RULES = dict.fromkeys(
    (RP_LIST, RP_CREATE, RP_SHOW, RP_UPDATE, RP_DELETE, RC_LIST,
     RC_CREATE, RC_SHOW, RC_UPDATE, RC_DELETE, INVENTORY_LIST,
     INVENTORY_CREATE, INVENTORY_SHOW, INVENTORY_UPDATE, INVENTORY_DELETE,
     AGGREGATE_LIST, AGGREGATE_UPDATE, PROVIDER_USAGES, TRAIT_LIST,
     TRAIT_SHOW, TRAIT_UPDATE, TRAIT_DELETE, RP_TRAIT_LIST,
     RP_TRAIT_UPDATE, RP_TRAIT_DELETE, ALLOCATION_MANAGE, ALLOCATION_LIST,
     ALLOCATION_UPDATE, ALLOCATION_DELETE, RP_ALLOCATION_LIST,
     CANDIDATE_LIST), ADMIN_OR_SERVICE)
API_RULES[TOTAL_USAGES] = ADMIN_OR_PROJECT_READER_OR_SERVICE
API_RULES[RESHAPE] = SERVICE
API_SCOPES = ('project',)

#: Every default rule: name -> check string.
RULES = dict(BASE_RULES, **API_RULES)


# -- request checks placement makes before the policy -----------------------

def _since(minimum, status=404):
    def check(req):
        common.require_version(req, minimum, status)
    return check


def _json_until(maximum):
    # PUT /resource_classes/{name} reads a body only before 1.7.
    def check(req):
        if req.version.matches((1, 0), maximum):
            common.require_json(req)
    return check


_ACCEPT = common.check_accept
_JSON = common.require_json

#: ``{(route template, method): (policy, checks made before it)}``.
ROUTE_POLICIES = {
    ('/resource_classes', 'GET'): (RC_LIST, (_since((1, 2)), _ACCEPT)),
    ('/resource_classes', 'POST'): (RC_CREATE, (_since((1, 2)), _JSON)),
    ('/resource_classes/{name}', 'GET'): (
        RC_SHOW, (_since((1, 2)), _ACCEPT)),
    ('/resource_classes/{name}', 'PUT'): (
        RC_UPDATE, (_since((1, 2)), _json_until((1, 6)))),
    ('/resource_classes/{name}', 'DELETE'): (RC_DELETE, (_since((1, 2)),)),
    ('/resource_providers', 'GET'): (RP_LIST, (_ACCEPT,)),
    ('/resource_providers', 'POST'): (RP_CREATE, (_JSON,)),
    ('/resource_providers/{uuid}', 'GET'): (RP_SHOW, (_ACCEPT,)),
    ('/resource_providers/{uuid}', 'DELETE'): (RP_DELETE, ()),
    ('/resource_providers/{uuid}', 'PUT'): (RP_UPDATE, (_JSON,)),
    ('/resource_providers/{uuid}/inventories', 'GET'): (
        INVENTORY_LIST, (_ACCEPT,)),
    ('/resource_providers/{uuid}/inventories', 'POST'): (
        INVENTORY_CREATE, (_JSON,)),
    ('/resource_providers/{uuid}/inventories', 'PUT'): (
        INVENTORY_UPDATE, (_JSON,)),
    ('/resource_providers/{uuid}/inventories', 'DELETE'): (
        INVENTORY_DELETE, (_since((1, 5), status=405),)),
    ('/resource_providers/{uuid}/inventories/{resource_class}', 'GET'): (
        INVENTORY_SHOW, (_ACCEPT,)),
    ('/resource_providers/{uuid}/inventories/{resource_class}', 'PUT'): (
        INVENTORY_UPDATE, (_JSON,)),
    ('/resource_providers/{uuid}/inventories/{resource_class}', 'DELETE'): (
        INVENTORY_DELETE, ()),
    ('/resource_providers/{uuid}/usages', 'GET'): (
        PROVIDER_USAGES, (_ACCEPT,)),
    ('/resource_providers/{uuid}/aggregates', 'GET'): (
        AGGREGATE_LIST, (_ACCEPT, _since((1, 1)))),
    ('/resource_providers/{uuid}/aggregates', 'PUT'): (
        AGGREGATE_UPDATE, (_JSON, _since((1, 1)))),
    ('/resource_providers/{uuid}/allocations', 'GET'): (
        RP_ALLOCATION_LIST, (_ACCEPT,)),
    ('/allocations', 'POST'): (ALLOCATION_MANAGE, (_since((1, 13)), _JSON)),
    ('/allocations/{consumer}', 'GET'): (ALLOCATION_LIST, (_ACCEPT,)),
    ('/allocations/{consumer}', 'PUT'): (ALLOCATION_UPDATE, (_JSON,)),
    ('/allocations/{consumer}', 'DELETE'): (ALLOCATION_DELETE, ()),
    ('/allocation_candidates', 'GET'): (
        CANDIDATE_LIST, (_since((1, 10)), _ACCEPT)),
    ('/traits', 'GET'): (TRAIT_LIST, (_since((1, 6)), _ACCEPT)),
    ('/traits/{name}', 'GET'): (TRAIT_SHOW, (_since((1, 6)),)),
    ('/traits/{name}', 'PUT'): (TRAIT_UPDATE, (_since((1, 6)),)),
    ('/traits/{name}', 'DELETE'): (TRAIT_DELETE, (_since((1, 6)),)),
    ('/resource_providers/{uuid}/traits', 'GET'): (
        RP_TRAIT_LIST, (_since((1, 6)), _ACCEPT)),
    ('/resource_providers/{uuid}/traits', 'PUT'): (
        RP_TRAIT_UPDATE, (_since((1, 6)), _JSON)),
    ('/resource_providers/{uuid}/traits', 'DELETE'): (
        RP_TRAIT_DELETE, (_since((1, 6)),)),
    ('/usages', 'GET'): (TOTAL_USAGES, (_since((1, 9)), _ACCEPT)),
    ('/reshaper', 'POST'): (RESHAPE, (_since((1, 30)), _JSON)),
}


# -- credentials ------------------------------------------------------------

class Credentials(object):
    """Who a request speaks for, as placement's policy sees it.

    :param user_id: the user.
    :param project_id: the project (None for a system scoped token).
    :param roles: the role names.
    :param system_scope: ``OpenStack-System-Scope``, if any.
    :param domain_id: ``X-Domain-Id``, if any.
    """

    def __init__(self, user_id, project_id, roles, system_scope=None,
                 domain_id=None):
        self.user_id = user_id
        self.project_id = project_id
        self.roles = [role.strip() for role in roles]
        self.system_scope = system_scope
        self.domain_id = domain_id

    @property
    def scope(self):
        """``system``, ``domain`` or ``project``, as oslo.policy decides."""
        if self.system_scope:
            return 'system'
        if self.domain_id:
            return 'domain'
        return 'project'

    def values(self):
        """The attributes a ``key:%(target)s`` check may compare."""
        return {'user_id': self.user_id, 'project_id': self.project_id,
                'roles': self.roles, 'system_scope': self.system_scope,
                'domain_id': self.domain_id}


def credentials(req):
    """The :class:`Credentials` of a request (``noauth2``).

    :param req: a request that has an ``X-Auth-Token`` header.
    """
    user_id, _sep, project_id = req.header('X-Auth-Token', '').partition(
        ':')
    project_id = project_id or user_id
    system_scope = req.header('OpenStack-System-Scope')
    if system_scope:
        # noauth2 does not set a project on a system scoped token.
        project_id = req.header('X-Tenant-Id', req.header('X-Tenant'))
    project_id = req.header('X-Project-Id', project_id)
    roles = req.header('X-Roles')
    if roles is not None:
        roles = roles.split(',')
    else:
        roles = ['admin'] if user_id == 'admin' else []
    return Credentials(user_id, project_id, roles, system_scope,
                       req.header('X-Domain-Id'))


# -- check strings ----------------------------------------------------------

def _tokens(text):
    # Like oslo.policy: words split on spaces, parentheses peeled off
    # their ends (so that '%(project_id)s' stays whole).
    tokens = []
    for word in text.split():
        core = word.lstrip('(')
        tokens.extend('(' * (len(word) - len(core)))
        bare = core.rstrip(')')
        if bare:
            tokens.append(bare.lower() if bare.lower() in (
                'and', 'or', 'not') else bare)
        tokens.extend(')' * (len(core) - len(bare)))
    return tokens


def _parse(text):
    """Compile a check string into ``check(target, creds, rules)``."""
    tokens = _tokens(text)
    check, rest = _parse_or(tokens)
    if rest:
        raise ValueError('unexpected %r in check string %r'
                         % (rest[0], text))
    return check


def _parse_or(tokens):
    left, tokens = _parse_and(tokens)
    while tokens and tokens[0] == 'or':
        right, tokens = _parse_and(tokens[1:])
        left = _any_of(left, right)
    return left, tokens


def _parse_and(tokens):
    left, tokens = _parse_not(tokens)
    while tokens and tokens[0] == 'and':
        right, tokens = _parse_not(tokens[1:])
        left = _all_of(left, right)
    return left, tokens


def _parse_not(tokens):
    if tokens and tokens[0] == 'not':
        inner, tokens = _parse_not(tokens[1:])
        return (lambda target, creds, rules:
                not inner(target, creds, rules)), tokens
    if tokens and tokens[0] == '(':
        inner, tokens = _parse_or(tokens[1:])
        if not tokens or tokens[0] != ')':
            raise ValueError('unbalanced parenthesis')
        return inner, tokens[1:]
    if not tokens:
        raise ValueError('incomplete check string')
    return _atom(tokens[0]), tokens[1:]


def _any_of(left, right):
    return lambda target, creds, rules: (left(target, creds, rules) or
                                         right(target, creds, rules))


def _all_of(left, right):
    return lambda target, creds, rules: (left(target, creds, rules) and
                                         right(target, creds, rules))


def _atom(word):
    if word in ('@', '!'):
        return lambda target, creds, rules: word == '@'
    kind, _sep, match = word.partition(':')
    if kind == 'rule':
        return lambda target, creds, rules: (
            match in rules and rules[match](target, creds, rules))
    if kind == 'role':
        def role(target, creds, rules):
            try:
                wanted = (match % target).lower()
            except KeyError:
                return False
            return wanted in [name.lower() for name in creds['roles']]
        return role

    def generic(target, creds, rules):
        try:
            wanted = match % target
        except KeyError:
            return False
        return kind in creds and wanted == str(creds[kind])
    return generic


class Enforcer(object):
    """Placement's default rules, ready to authorize requests.

    :param enforce_new_defaults: enforce the new defaults alone, without
        the deprecated ``role:admin`` alternatives (oslo.policy's option;
        placement's test fixture, and so the ``real`` backend, runs
        without it).
    :param overrides: ``{rule name: check string}`` replacing defaults.
    """

    def __init__(self, enforce_new_defaults=False, overrides=None):
        checks = dict(RULES)
        if not enforce_new_defaults:
            for name in DEPRECATED_BASE_RULES:
                checks[name] = '(%s) or (%s)' % (checks[name],
                                                 DEPRECATED_ADMIN)
        checks.update(overrides or {})
        self._rules = {name: _parse(text) for name, text in checks.items()}

    def allows(self, action, creds, target=None):
        """Whether the rule ``action`` allows ``creds`` (scope included).

        :param action: a rule name, e.g. ``placement:usages``.
        :param creds: :class:`Credentials`.
        :param target: the target of the check (default: the caller's own
            project and user).
        """
        if action in API_RULES and creds.scope not in API_SCOPES:
            return False
        if target is None:
            target = {'project_id': creds.project_id,
                      'user_id': creds.user_id}
        check = self._rules.get(action)
        return bool(check and check(target, creds.values(), self._rules))

    def authorize(self, req, template):
        """Refuse a request its route's policy does not allow.

        Nothing happens for an allowed request or a route without policy.
        A refused one first meets the checks placement makes before its
        policy (which may refuse it otherwise), then a 403.

        :param req: the routed request.
        :param template: the template of the route it matched.
        :raises Forbidden: the policy refuses the request.
        :raises: what the earlier checks raise (NotAcceptable,
            UnsupportedMediaType, NotFound, MethodNotAllowed).
        """
        entry = ROUTE_POLICIES.get((template, req.method))
        if entry is None:
            return
        action, earlier_checks = entry
        creds = credentials(req)
        target = None
        if action == TOTAL_USAGES:
            target = {'project_id': req.query.get('project_id')}
        if self.allows(action, creds, target):
            return
        for check in earlier_checks:
            check(req)
        if creds.scope not in API_SCOPES:
            # oslo.policy's InvalidScope, which placement re-raises with
            # the bare policy name as its message.
            raise errors.Forbidden(action)
        raise errors.Forbidden(
            'Policy does not allow %s to be performed.' % action)
