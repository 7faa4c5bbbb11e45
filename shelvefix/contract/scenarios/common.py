"""Shorthands the contract scenarios share.

Each helper sends one request through
:meth:`~shelvefix.contract.api.ContractAPI.request` (so it is recorded)
and returns the ``requests.Response``.
"""

# Consumer generations appeared in this microversion; the bug is about it.
V = '1.28'
PROJECT = 'proj'
USER = 'user'
INVENTORY = {'VCPU': 8, 'MEMORY_MB': 4096, 'DISK_GB': 100}
FLAVOR = {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 10}


def body(allocations, generation=None, project_id=PROJECT, user_id=USER,
         **extra):
    """A ``PUT /allocations/{c}`` body in the 1.28+ format.

    :param allocations: ``{provider_uuid: {resource_class: amount}}``.
    :param generation: the ``consumer_generation`` to send.
    :param project_id: the consumer's project.
    :param user_id: the consumer's user.
    :param extra: more members (``consumer_type``, ``mappings``...).
    """
    data = {'allocations': {rp: {'resources': dict(resources)}
                            for rp, resources in allocations.items()},
            'project_id': project_id, 'user_id': user_id,
            'consumer_generation': generation}
    data.update(extra)
    return data


def host(api, name, inventory=None):
    """A provider with the standard (or a given) inventory.

    :param api: the scenario's ContractAPI.
    :param name: the provider name (and uuid name).
    :param inventory: its inventory; default :data:`INVENTORY`.
    :returns: the provider uuid.
    """
    return api.provider(name, INVENTORY if inventory is None else inventory)


def put(api, consumer, allocations, generation=None, version=V, note=None,
        **extra):
    """``PUT /allocations/{consumer}`` with a :func:`body`.

    :param api: the scenario's ContractAPI.
    :param consumer: the consumer uuid.
    :param allocations: ``{provider_uuid: {resource_class: amount}}``.
    :param generation: the consumer generation sent.
    :param version: the microversion.
    :param note: the step's label.
    :param extra: passed to :func:`body`.
    """
    return api.request('PUT', '/allocations/%s' % consumer,
                       body(allocations, generation, **extra),
                       version=version, note=note)


def get(api, consumer, version=V, note=None):
    """``GET /allocations/{consumer}``.

    :param api: the scenario's ContractAPI.
    :param consumer: the consumer uuid.
    :param version: the microversion.
    :param note: the step's label.
    """
    return api.request('GET', '/allocations/%s' % consumer,
                       version=version, note=note)


def delete(api, consumer, version=V, note=None):
    """``DELETE /allocations/{consumer}``.

    :param api: the scenario's ContractAPI.
    :param consumer: the consumer uuid.
    :param version: the microversion.
    :param note: the step's label.
    """
    return api.request('DELETE', '/allocations/%s' % consumer,
                       version=version, note=note)


def generation_of(response):
    """The ``consumer_generation`` of a GET answer (None if absent).

    :param response: the answer to ``GET /allocations/{c}``.
    """
    try:
        return response.json().get('consumer_generation')
    except ValueError:
        return None


def provider(api, rp, version=V):
    """``GET /resource_providers/{rp}`` (its generation, mostly).

    :param api: the scenario's ContractAPI.
    :param rp: the provider uuid.
    :param version: the microversion.
    """
    return api.request('GET', '/resource_providers/%s' % rp,
                       version=version)


def usages(api, rp, version=V):
    """``GET /resource_providers/{rp}/usages``.

    :param api: the scenario's ContractAPI.
    :param rp: the provider uuid.
    :param version: the microversion.
    """
    return api.request('GET', '/resource_providers/%s/usages' % rp,
                       version=version)


def project_usages(api, project_id=PROJECT, version=V, query=''):
    """``GET /usages?project_id=...`` plus any extra ``query``.

    :param api: the scenario's ContractAPI.
    :param project_id: the project.
    :param version: the microversion.
    :param query: more query parameters, e.g. ``'&user_id=u'``.
    """
    return api.request('GET', '/usages?project_id=%s%s'
                       % (project_id, query), version=version)


def provider_allocations(api, rp, version=V):
    """``GET /resource_providers/{rp}/allocations``.

    :param api: the scenario's ContractAPI.
    :param rp: the provider uuid.
    :param version: the microversion.
    """
    return api.request('GET', '/resource_providers/%s/allocations' % rp,
                       version=version)
