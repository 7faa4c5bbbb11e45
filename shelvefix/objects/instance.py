"""A small instance model whose ``save`` writes through a shared store.

The point of the model is visibility: the API side (a client polling the
server's status) reads the :class:`InstanceStore`, never the compute
manager's in-memory object. Setting ``instance.vm_state`` changes nothing
anyone else can see until :meth:`Instance.save` succeeds, exactly as with
nova's database-backed ``Instance`` object.
"""

import copy

from shelvefix.compute import power_state
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix.objects import base
from shelvefix import utils

FIELDS = ('uuid', 'vm_state', 'task_state', 'power_state', 'host', 'node',
          'project_id', 'user_id', 'flavor')


class Flavor(object):
    """The sizes placement allocations are computed from."""

    def __init__(self, name='m1.small', vcpus=1, memory_mb=512, root_gb=1,
                 ephemeral_gb=0):
        for field, value in (('vcpus', vcpus), ('memory_mb', memory_mb),
                             ('root_gb', root_gb),
                             ('ephemeral_gb', ephemeral_gb)):
            if (not isinstance(value, int) or isinstance(value, bool) or
                    value < 0):
                raise exception.Invalid(
                    reason='flavor %s: %s must be a non-negative integer, '
                           'got %r' % (name, field, value))
        if not vcpus or not memory_mb:
            raise exception.Invalid(
                reason='flavor %s: vcpus and memory_mb must be positive'
                       % name)
        self.name = name
        self.vcpus = vcpus
        self.memory_mb = memory_mb
        self.root_gb = root_gb
        self.ephemeral_gb = ephemeral_gb

    @property
    def resources(self):
        """Placement resource classes and amounts for one instance."""
        res = {'VCPU': self.vcpus, 'MEMORY_MB': self.memory_mb}
        disk = self.root_gb + self.ephemeral_gb
        if disk:
            res['DISK_GB'] = disk
        return res

    def __eq__(self, other):
        return isinstance(other, Flavor) and vars(self) == vars(other)

    def __repr__(self):
        return 'Flavor(%s)' % ', '.join(
            '%s=%r' % kv for kv in sorted(vars(self).items()))


class InstanceStore(base.RowStore):
    """The saved state of instances: what every reader but compute sees.

    A :class:`~shelvefix.objects.base.RowStore` (copies, observers and the
    ``interceptor`` are described there) whose updates compare the current
    task state, like nova's ``instance_update_and_get_original`` with
    ``expected_task_state``. Tests use the observers to build a single
    timeline; a client polling the server waits with :meth:`wait_for`.
    """

    kind = 'instance'

    def _not_found(self, uuid):
        return exception.InstanceNotFound(instance_id=uuid)

    def _describe(self, row):
        return 'vm_state=%s task_state=%s host=%s' % (
            row['vm_state'], row['task_state'], row['host'])

    def get(self, uuid):
        """Return a copy of the saved row.

        Unlike the other intercepted accesses, a read of a missing
        instance leaves the interceptor's handle without a result.

        :raises InstanceNotFound: no such instance, or it is destroyed
            (soft-deleted)
        """
        handle = self._intercept('get', uuid)
        row = self._read(uuid)
        handle.done(self._describe(row))
        return row

    def update(self, uuid, values, expected_task_state=None,
               expected_vm_state=None):
        """Write ``values`` if the row's states are as expected.

        :param expected_task_state: None (not checked) or a list of
            acceptable current task states (``[None]`` expects none)
        :param expected_vm_state: likewise for vm_state
        :returns: a copy of the new row
        :raises UnexpectedTaskStateError: the task state is not expected
        :raises InstanceUpdateConflict: the vm_state is not expected
        :raises InstanceNotFound: no such instance, or it is destroyed
        """
        return self._update(uuid, values,
                            expected_task_state=expected_task_state,
                            expected_vm_state=expected_vm_state)

    def _check_update(self, uuid, row, values, expected_task_state,
                      expected_vm_state):
        checks = (('task_state', expected_task_state,
                   exception.UnexpectedTaskStateError),
                  ('vm_state', expected_vm_state,
                   exception.InstanceUpdateConflict))
        for field, expected, exc in checks:
            if expected is None:
                continue
            if not isinstance(expected, (list, tuple, set)):
                expected = [expected]
            if row[field] not in expected:
                raise exc(instance_uuid=uuid,
                          expected={field: list(expected)},
                          actual={field: row[field]})


class Instance(object):
    """An instance as the compute manager holds it in memory.

    Attribute changes stay local until :meth:`save`; ``save`` writes only
    the changed fields and then reloads the saved row.
    """

    def __init__(self, store, uuid, vm_state=vm_states.ACTIVE,
                 task_state=None, power_state=power_state.RUNNING,
                 host=None, node=None, project_id=None, user_id=None,
                 flavor=None):
        object.__setattr__(self, '_store', store)
        object.__setattr__(self, '_changed', set())
        utils.validate_uuid(uuid)
        if vm_state not in vm_states.ALL_STATES:
            raise exception.Invalid(reason='unknown vm_state %r' % vm_state)
        if task_state not in task_states.ALL_STATES:
            raise exception.Invalid(reason='unknown task_state %r'
                                    % task_state)
        values = {'uuid': uuid, 'vm_state': vm_state,
                  'task_state': task_state, 'power_state': power_state,
                  'host': host, 'node': node, 'project_id': project_id,
                  'user_id': user_id, 'flavor': flavor or Flavor()}
        self._load(values)

    @classmethod
    def create(cls, store, uuid, **fields):
        """Build an instance and insert it into ``store``."""
        inst = cls(store, uuid, **fields)
        store.create(inst._values())
        return inst

    @classmethod
    def get_by_uuid(cls, store, uuid):
        """Load an instance from ``store``."""
        return cls(store, **store.get(uuid))

    def _load(self, values):
        for field in FIELDS:
            object.__setattr__(self, field, values[field])
        self._changed.clear()

    def _values(self):
        return {field: getattr(self, field) for field in FIELDS}

    def __setattr__(self, name, value):
        if name not in FIELDS:
            raise AttributeError('Instance has no field %r' % name)
        if name == 'uuid':
            raise AttributeError('uuid cannot be changed')
        object.__setattr__(self, name, value)
        self._changed.add(name)

    def obj_clone(self):
        """A copy with the same values and the same unsaved changes."""
        clone = type(self)(self._store, **copy.deepcopy(self._values()))
        clone._changed.update(self._changed)
        return clone

    def obj_what_changed(self):
        """The fields set since the last save or refresh."""
        return set(self._changed)

    def save(self, expected_vm_state=None, expected_task_state=None):
        """Write the changed fields through the store.

        :param expected_task_state: None (not checked) or the task states
            the saved row must be in, e.g. ``[SHELVING,
            SHELVING_OFFLOADING]``; ``[None]`` expects no task state
        :param expected_vm_state: likewise for vm_state
        :raises UnexpectedTaskStateError: the saved task state differs; the
            in-memory changes are kept so the caller can see them
        """
        updates = {field: getattr(self, field) for field in self._changed}
        row = self._store.update(self.uuid, updates,
                                 expected_task_state=expected_task_state,
                                 expected_vm_state=expected_vm_state)
        self._load(row)

    def destroy(self):
        """Soft-delete the saved row, as nova's ``Instance.destroy``.

        The row stays in the store, marked deleted; from now on reading,
        saving or refreshing this instance, or any copy of it, raises
        InstanceNotFound, and no query lists it (nova's reads with
        ``read_deleted='no'``). nova also refuses to destroy an instance
        with no host whose saved row has one (a build scheduled
        meanwhile); every instance destroyed here has its host.

        :raises InstanceNotFound: no such instance, or destroyed already
        """
        self._store.soft_delete(self.uuid)
        object.__setattr__(self, '_destroyed', True)

    @property
    def deleted(self):
        """True once :meth:`destroy` succeeded on this object.

        nova's ``deleted`` field, as its ``destroy`` loads it; other
        copies of the instance do not know.
        """
        return self.__dict__.get('_destroyed', False)

    def saved(self):
        """Return a copy of the saved row (what other readers see)."""
        return self._store.get(self.uuid)

    def refresh(self):
        """Drop in-memory changes and reload the saved row."""
        self._load(self._store.get(self.uuid))

    def __repr__(self):
        return ('Instance(uuid=%s, vm_state=%s, task_state=%s, host=%s)'
                % (self.uuid, self.vm_state, self.task_state, self.host))


class InstanceList(object):
    """Queries returning several instances, named as nova names them."""

    @staticmethod
    def get_by_host_and_node(store, host, node):
        """The instances saved on ``host`` and ``node``, in uuid order."""
        return [Instance(store, **row)
                for row in store.query(host=host, node=node)]
