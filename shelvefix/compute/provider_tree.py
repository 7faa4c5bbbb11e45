"""What a compute service knows of its nodes' resource providers.

nova's report client keeps a ``ProviderTree``: for each provider of the
service's nodes, its name, the generation placement last answered, its
inventory and traits. A write to placement sends the cached generation,
and the cache is what the next report is compared with, so that only what
changed is written. :class:`ProviderTree` is that cache for root providers
(nodes with no nested providers, as every node of the lab is); a virt
driver's ``update_provider_tree`` changes a copy (:meth:`ProviderTree.copy`)
and the report client writes the difference
(:meth:`~shelvefix.scheduler.client.tree_report.ProviderTreeCalls.
update_from_provider_tree`).
"""

import copy
import functools


class ProviderData(object):
    """One provider as a tree holds it.

    :ivar uuid: the provider's uuid
    :ivar name: its name (the node's ``hypervisor_hostname``)
    :ivar generation: the generation placement last answered (None: not
        known)
    :ivar inventory: ``{resource class: {field: value}}``
    :ivar traits: a set of trait names
    """

    def __init__(self, uuid, name, generation=None, inventory=None,
                 traits=None):
        self.uuid = uuid
        self.name = name
        self.generation = generation
        self.inventory = copy.deepcopy(inventory or {})
        self.traits = set(traits or ())

    def __repr__(self):
        return 'ProviderData(%s, generation=%s, traits=%s)' % (
            self.name, self.generation, sorted(self.traits))


def _access(write):
    """Make a method of :class:`ProviderTree` an intercepted access."""
    def wrap(method):
        @functools.wraps(method)
        def access(self, *args, **kwargs):
            interceptor = self.interceptor
            if interceptor is None:
                return method(self, *args, **kwargs)
            handle = interceptor(method.__name__, write)
            try:
                result = method(self, *args, **kwargs)
            except Exception as e:
                handle.done(type(e).__name__)
                raise
            handle.done(None)
            return result
        return access
    return wrap


class ProviderTree(object):
    """Root providers by uuid, each found by its uuid or by its name.

    ``interceptor``, when set, is called before each access as
    ``interceptor(name, write)`` (the method's name, and whether it
    changes the tree) and returns a handle whose ``done(result)`` is
    called after it: the race lab makes each access to a service's cache,
    which its actors share, an explorer step. A :meth:`copy` has none.
    """

    def __init__(self):
        self._providers = {}
        self.interceptor = None

    def _find(self, name_or_uuid):
        if name_or_uuid in self._providers:
            return self._providers[name_or_uuid]
        for data in self._providers.values():
            if data.name == name_or_uuid:
                return data
        raise ValueError('no provider %s in the tree' % name_or_uuid)

    @_access(write=False)
    def exists(self, name_or_uuid):
        """Whether the tree has that provider."""
        try:
            self._find(name_or_uuid)
        except ValueError:
            return False
        return True

    @_access(write=True)
    def new_root(self, name, uuid, generation=None):
        """Add a provider (replacing what the tree had for ``uuid``)."""
        self._providers[uuid] = ProviderData(uuid, name, generation)
        return uuid

    @_access(write=True)
    def remove(self, name_or_uuid):
        """Forget a provider; nothing if the tree does not have it."""
        try:
            data = self._find(name_or_uuid)
        except ValueError:
            return
        del self._providers[data.uuid]

    @_access(write=True)
    def clear(self):
        """Forget every provider."""
        self._providers.clear()

    @_access(write=False)
    def data(self, name_or_uuid):
        """A copy of what the tree holds for that provider.

        :raises ValueError: the tree does not have it
        """
        return copy.deepcopy(self._find(name_or_uuid))

    @_access(write=False)
    def get_provider_uuids(self):
        """The uuids of every provider, sorted."""
        return sorted(self._providers)

    @_access(write=True)
    def update_inventory(self, name_or_uuid, inventory, generation=None):
        """Set a provider's inventory (and its generation, if given)."""
        data = self._find(name_or_uuid)
        data.inventory = copy.deepcopy(inventory)
        if generation is not None:
            data.generation = generation

    @_access(write=True)
    def update_traits(self, name_or_uuid, traits, generation=None):
        """Set a provider's traits (and its generation, if given)."""
        data = self._find(name_or_uuid)
        data.traits = set(traits)
        if generation is not None:
            data.generation = generation

    @_access(write=False)
    def has_inventory_changed(self, name_or_uuid, inventory):
        """Whether ``inventory`` differs from the provider's."""
        return self._find(name_or_uuid).inventory != inventory

    @_access(write=False)
    def has_traits_changed(self, name_or_uuid, traits):
        """Whether ``traits`` differ from the provider's."""
        return self._find(name_or_uuid).traits != set(traits)

    @_access(write=False)
    def copy(self):
        """A deep copy, for a driver to change."""
        tree = ProviderTree()
        tree._providers = copy.deepcopy(self._providers)
        return tree
