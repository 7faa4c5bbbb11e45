"""The row store the instance and the migration store are made of.

A :class:`RowStore` holds saved rows by uuid, the way a database table
does for nova's objects: every read returns a copy, every write is atomic
under the store's lock, and nothing a caller holds changes a saved row
until it writes it through the store. What differs between the stores is
what their rows are, how an update is checked against the saved row and
what a missing row raises; each subclass says so through the hooks below.

A row can be soft-deleted (:meth:`RowStore.soft_delete`), as nova's
``instance_destroy`` sets a row's ``deleted`` column: the row stays, but
every read and write of it but :meth:`RowStore.peek` then behaves as
nova's database API with ``read_deleted='no'``: as if it did not exist.
"""

import copy
import threading
import time

from shelvefix import exception


class _NoHandle(object):
    def done(self, result=None):
        pass


_NO_HANDLE = _NoHandle()


class RowStore(object):
    """Saved rows by uuid: what every reader but their writer sees.

    Observers are called as ``observer(uuid, row)`` with a copy of the
    saved row after each successful write, under the store's lock, so an
    observer sees the writes in the order they happened.

    ``interceptor``, when set, is called *before* each intercepted access
    as ``interceptor(op, uuid, guard=None)`` with op ``'get'``,
    ``'list'`` (uuid None), ``'update'``, ``'destroy'`` or ``'wait'``,
    and returns a
    handle whose ``done(result)`` is called with the outcome. The
    interleaving explorer uses it to pause an actor at each access;
    ``guard`` (for ``'wait'``) says when the access can proceed. Creating
    a row, :meth:`peek`, :meth:`is_deleted` and :meth:`uuids` are never
    intercepted.

    A soft-deleted row (:meth:`soft_delete`) is not found by :meth:`get`,
    :meth:`query` or an update, as nova's reads and writes with
    ``read_deleted='no'`` (their default) do not find it. :meth:`peek`,
    :meth:`wait_for` and :meth:`uuids` still see it, as a check reading
    with ``read_deleted='yes'`` does; :meth:`is_deleted` tells.

    A subclass sets :attr:`kind` and implements :meth:`_not_found`,
    :meth:`_describe` and, for its checks, :meth:`_check_update`.
    """

    #: What a row is, in messages (``'instance'``, ``'migration'``).
    kind = 'row'

    def __init__(self):
        self._rows = {}
        self._deleted = set()
        self._lock = threading.RLock()
        self.observers = []
        self.interceptor = None

    # -- what each store says ------------------------------------------------

    def _not_found(self, uuid):
        """The exception to raise for a uuid with no row."""
        raise NotImplementedError()

    def _describe(self, row):
        """A saved row as an intercepted access reports it."""
        raise NotImplementedError()

    def _check_update(self, uuid, row, values, **expected):
        """Check an update against the saved ``row``, under the lock.

        :param expected: what the subclass's ``update`` expects of the row
        :raises ShelvefixException: the update must not be written
        """

    def _stamp(self, row, created):
        """Set what the store itself keeps in ``row``, under the lock.

        Called with the row about to be inserted (``created`` True) or
        just updated, before the observers see it.
        """

    # -- the mechanics -------------------------------------------------------

    def _intercept(self, op, uuid, guard=None):
        if self.interceptor is None:
            return _NO_HANDLE
        return self.interceptor(op, uuid, guard=guard)

    def create(self, values):
        """Insert a new row (an intercepted ``'create'``).

        :returns: a copy of the saved row
        :raises Invalid: the uuid exists
        """
        handle = self._intercept('create', values['uuid'])
        with self._lock:
            if values['uuid'] in self._rows:
                handle.done('Invalid')
                raise exception.Invalid(
                    reason='%s %s already exists' % (self.kind,
                                                     values['uuid']))
            row = copy.deepcopy(values)
            self._stamp(row, created=True)
            self._rows[values['uuid']] = row
            self._notify(values['uuid'])
            handle.done(self._describe(row))
            return copy.deepcopy(row)

    def get(self, uuid):
        """Return a copy of the saved row (an intercepted ``'get'``).

        :raises ShelvefixException: the store's NotFound, reported to
            the interceptor's handle
        """
        handle = self._intercept('get', uuid)
        try:
            row = self._read(uuid)
        except exception.ShelvefixException as e:
            handle.done(type(e).__name__)
            raise
        handle.done(self._describe(row))
        return row

    def _read(self, uuid):
        """A copy of the row, as a read with ``read_deleted='no'``.

        :raises ShelvefixException: the store's NotFound, also for a
            soft-deleted row
        """
        with self._lock:
            if uuid in self._deleted:
                raise self._not_found(uuid)
            return self.peek(uuid)

    def peek(self, uuid):
        """Like :meth:`get` but never intercepted (for checks and guards).

        A soft-deleted row is returned too (``read_deleted='yes'``).

        :raises ShelvefixException: the store's NotFound
        """
        with self._lock:
            try:
                return copy.deepcopy(self._rows[uuid])
            except KeyError:
                raise self._not_found(uuid)

    def uuids(self):
        """The uuids of every saved row, sorted (never intercepted).

        Soft-deleted rows included.
        """
        with self._lock:
            return sorted(self._rows)

    def is_deleted(self, uuid):
        """True if the row is soft-deleted (never intercepted).

        :raises ShelvefixException: the store's NotFound: no such row
        """
        with self._lock:
            if uuid not in self._rows:
                raise self._not_found(uuid)
            return uuid in self._deleted

    def soft_delete(self, uuid):
        """Mark the row deleted (an intercepted ``'destroy'``).

        nova's ``instance_destroy``: the row is kept but from now on not
        found by reads and writes (see the class). Observers are not
        called: no field of the row changes.

        :returns: a copy of the row
        :raises ShelvefixException: the store's NotFound, also if the row
            is deleted already (nova's racing delete)
        """
        handle = self._intercept('destroy', uuid)
        try:
            with self._lock:
                row = self._read(uuid)
                self._deleted.add(uuid)
        except exception.ShelvefixException as e:
            handle.done(type(e).__name__)
            raise
        handle.done('deleted')
        return row

    def query(self, predicate=None, **fields):
        """Copies of the matching rows, in uuid order.

        One intercepted read of every row (op ``'list'``, uuid None), as a
        database query is. Soft-deleted rows never match.

        :param predicate: None or a callable taking a row, true to keep it
        :param fields: field values a row must have (ANDed with predicate)
        :returns: a list of row copies
        """
        handle = self._intercept('list', None)
        with self._lock:
            rows = [copy.deepcopy(row)
                    for uuid, row in sorted(self._rows.items())
                    if uuid not in self._deleted and
                    all(row[name] == value
                        for name, value in fields.items()) and
                    (predicate is None or predicate(row))]
        handle.done('%d row(s)' % len(rows))
        return rows

    def wait_for(self, uuid, predicate, timeout=60.0, poll_interval=0.001,
                 sleep=time.sleep, clock=time.monotonic, missing=False):
        """Wait until ``predicate(row)`` holds, as a polling API client does.

        Under the explorer this is a single guarded step; otherwise the row
        is polled every ``poll_interval`` seconds.

        :param missing: True to wait for a row not created yet too (the
            predicate is then asked only once the row exists)
        :returns: the row that satisfied the predicate
        :raises ShelvefixException: the store's NotFound (unless
            ``missing``)
        :raises TimeoutError: the predicate did not hold within ``timeout``
        """
        def holds():
            with self._lock:
                if missing and uuid not in self._rows:
                    return False
            return predicate(self.peek(uuid))

        if self.interceptor is not None:
            handle = self._intercept('wait', uuid, guard=holds)
            row = self.peek(uuid)
            handle.done(self._describe(row))
            return row
        deadline = clock() + timeout
        while True:
            if holds():
                return self.peek(uuid)
            if clock() >= deadline:
                raise TimeoutError('%s %s: condition not met within '
                                   '%.1f s' % (self.kind, uuid, timeout))
            sleep(poll_interval)

    def _update(self, uuid, values, **expected):
        """Write ``values`` if :meth:`_check_update` lets it (intercepted).

        The subclass's public ``update`` names what it expects; a failure
        is reported to the interceptor's handle by its exception's name.

        :returns: a copy of the new row
        """
        handle = self._intercept('update', uuid)
        try:
            row = self._write(uuid, values, expected)
        except exception.ShelvefixException as e:
            handle.done(type(e).__name__)
            raise
        handle.done(self._describe(row))
        return row

    def _write(self, uuid, values, expected):
        with self._lock:
            if uuid not in self._rows or uuid in self._deleted:
                raise self._not_found(uuid)
            row = self._rows[uuid]
            self._check_update(uuid, row, values, **expected)
            row.update(copy.deepcopy(values))
            self._stamp(row, created=False)
            self._notify(uuid)
            return copy.deepcopy(row)

    def _notify(self, uuid):
        for observer in list(self.observers):
            observer(uuid, copy.deepcopy(self._rows[uuid]))
