"""Where the race lab's actors pause: one explorer step per shared access.

Each piece of shared state the actors touch gets an interceptor that calls
:meth:`~shelvefix.explorer.controller.Controller.step` before the access:

* :class:`StepTransport` - every placement HTTP request (a requests
  transport wrapped around the backend's);
* :class:`StoreStepper` - every read, wait, list and save of an instance
  (or migration) row;
* :class:`LockStepper` - acquiring and releasing a host's named locks (a
  guarded step: enabled while the lock is free);
* :class:`RpcStepper` - casts, and receives (guarded: enabled once a
  message is waiting).

The guards of locks and receives come with a guard model
(:mod:`shelvefix.explorer.guards`): whether they hold follows from the
acquires and releases, casts and receives before them, so the explorer
never has to guess where a reversal moves them.

Each step names what it touches (its *footprint*, a frozenset of strings)
so that the explorer can tell steps that commute from steps that do not:
``consumer:<uuid>`` and ``provider:<uuid>`` in placement,
``instance:<uuid>`` in the instance store, ``migration:<uuid>`` in the
migration store, ``lock:<host>:<name>``,
``rpc:<topic>.<server>``. A placement request's footprint is computed
when the actor pauses, from what the request names and from which
providers the consumer holds allocations on. Only a step touching that
consumer can change the latter, and such a step is dependent anyway, so a
footprint never goes stale behind an independent step.

Footprints name things the same way in every run (``{instance}`` for the
run's server, whatever its uuid, through :class:`Names`): the search
compares steps of different runs.
"""

import json
import urllib.parse

import requests.adapters

from shelvefix.explorer import guards
from shelvefix.explorer import model


def consumer(uuid):
    return 'consumer:%s' % uuid


def provider(uuid):
    return 'provider:%s' % uuid


def instance(uuid):
    return 'instance:%s' % uuid


class Names(object):
    """Replaces a run's uuids by short names in labels.

    :param names: ``(value, name)`` pairs, e.g. ``(instance uuid,
        '{instance}')``
    """

    def __init__(self, names):
        self._names = list(names)

    def __call__(self, text):
        for value, name in self._names:
            text = text.replace(value, name)
        return text


def _short_detail(resp):
    """The specific part of a placement error, on one line."""
    try:
        detail = resp.json()['errors'][0]['detail']
    except (ValueError, KeyError, IndexError, TypeError):
        return resp.text[:80]
    # Placement's details repeat a generic sentence before a blank line.
    return ' '.join(detail.split('\n\n', 1)[-1].split())


def _body(request):
    body = request.body
    if not body:
        return None
    text = body.decode() if isinstance(body, bytes) else body
    try:
        return json.loads(text)
    except ValueError:
        return None


class StepTransport(requests.adapters.BaseAdapter):
    """Pauses the calling actor before each placement request.

    Wraps the transport the backend mounted (in-process or HTTP), so the
    request itself is unchanged; the trace entry gets the status, and for
    errors placement's detail.

    :param inner: the backend's transport
    :param controller: the run's controller
    :param names: a :class:`Names`
    :param providers: every provider the run's requests may touch
    :param holdings: ``{consumer: set of providers}`` placement holds at
        the start of the run; kept up to date from the responses
    """

    def __init__(self, inner, controller, names, providers, holdings=None):
        super().__init__()
        self.inner = inner
        self.controller = controller
        self.names = names
        self.providers = frozenset(providers)
        self.holdings = {c: set(rps) for c, rps in (holdings or {}).items()}

    def _path(self, request):
        path = urllib.parse.urlsplit(request.url).path
        prefix = getattr(self.inner, 'script_name', '')
        if prefix and path.startswith(prefix):
            path = path[len(prefix):]
        return path

    def footprint(self, method, path, body):
        """What a request touches, and whether it only reads."""
        resource, access = self._footprint(method, path, body)
        return frozenset(self.names(name) for name in resource), access

    def _footprint(self, method, path, body):
        parts = path.strip('/').split('/')
        everything = frozenset(
            [provider(rp) for rp in self.providers] +
            [consumer(c) for c in self.holdings])
        if parts[0] == 'allocations' and len(parts) == 2:
            uuid = parts[1]
            if method == 'GET':
                return frozenset([consumer(uuid)]), model.READ
            touched = set(self.holdings.get(uuid, ()))
            if body and isinstance(body.get('allocations'), dict):
                touched.update(body['allocations'])
            return (frozenset([consumer(uuid)] +
                              [provider(rp) for rp in touched]),
                    model.WRITE)
        if parts == ['allocations'] and method == 'POST' and body:
            # Several consumers at once (a move): each one named, with the
            # providers it holds and those it is given.
            touched = set()
            for uuid, entry in body.items():
                touched.update(self.holdings.get(uuid, ()))
                if isinstance(entry, dict) and isinstance(
                        entry.get('allocations'), dict):
                    touched.update(entry['allocations'])
            return (frozenset([consumer(uuid) for uuid in body] +
                              [provider(rp) for rp in touched]),
                    model.WRITE)
        if (parts[0] == 'resource_providers' and len(parts) == 3 and
                parts[2] in ('allocations', 'usages') and method == 'GET'):
            # Every allocation write names the providers it changes.
            return frozenset([provider(parts[1])]), model.READ
        if parts[0] == 'allocation_candidates' and method == 'GET':
            return frozenset(provider(rp) for rp in self.providers), \
                model.READ
        # Anything else is assumed to touch everything placement holds.
        return everything, model.READ if method == 'GET' else model.WRITE

    def _learn(self, method, path, body, resp):
        """Keep ``holdings`` right after a request on a consumer."""
        parts = path.strip('/').split('/')
        if parts == ['allocations'] and method == 'POST' and body:
            for uuid, entry in body.items():
                if resp is None or resp.status_code >= 500:
                    self.holdings[uuid] = set(self.providers)
                elif resp.status_code == 204:
                    self.holdings[uuid] = set(entry.get('allocations') or {})
            return
        if parts[0] != 'allocations' or len(parts) != 2:
            return
        uuid = parts[1]
        if resp is None or resp.status_code >= 500:
            # Unknown: placement may have done part of it.
            self.holdings[uuid] = set(self.providers)
        elif method == 'GET' and resp.status_code == 200:
            self.holdings[uuid] = set(resp.json().get('allocations', {}))
        elif method == 'DELETE' and resp.status_code == 204:
            self.holdings[uuid] = set()
        elif method == 'PUT' and resp.status_code == 204 and body:
            self.holdings[uuid] = set(body.get('allocations') or {})

    def _label(self, method, path, body):
        label = self.names('%s %s' % (method, path.split('?')[0]))
        if method == 'PUT' and body is not None:
            if body.get('allocations') == {}:
                label += ' (empty)'
            if 'consumer_generation' in body:
                gen = body['consumer_generation']
                label += ' gen=%s' % ('null' if gen is None else gen)
        return label

    def send(self, request, **kwargs):
        method = request.method.upper()
        path = self._path(request)
        body = _body(request) if method in ('PUT', 'POST') else None
        resource, access = self.footprint(method, path.split('?')[0], body)
        handle = self.controller.step(
            'placement', resource, access=access,
            label=self._label(method, path, body))
        resp = None
        try:
            resp = self.inner.send(request, **kwargs)
        except Exception as e:
            handle.done(type(e).__name__)
            raise
        finally:
            self._learn(method, path.split('?')[0], body, resp)
        result = str(resp.status_code)
        if resp.status_code >= 400:
            result += ' ' + self.names(_short_detail(resp))
        elif method == 'GET' and path.startswith('/allocations/'):
            gen = resp.json().get('consumer_generation')
            result += ' gen=%s' % ('none' if gen is None else gen)
        elif method == 'GET' and path.startswith('/allocation_candidates'):
            result += ' %d candidate(s)' % len(
                resp.json().get('allocation_requests', []))
        handle.done(result)
        return resp

    def close(self):
        pass


class StoreStepper(object):
    """The instance store's interceptor: one explorer step per access.

    :param store: the :class:`~shelvefix.objects.instance.InstanceStore`
        (or a :class:`~shelvefix.objects.migration.MigrationStore`, with
        ``kind`` ``'migration'``)
    :param wait_label: the label of a ``wait`` step (what is waited for)
    :param names: a :class:`Names` (default: none)
    :param kind: what the store's rows are; resources are named
        ``<kind>:<uuid>``

    A list reads every row saved so far and the table (``<kind>:*``); a
    create writes its row and the table, so that the explorer orders a
    list before and after a row that appears meanwhile (a second move's
    migration, and the audit listing the node's migrations).
    """

    LABELS = {'get': 'read %s', 'update': 'save %s',
              'destroy': 'destroy %s', 'list': 'list %ss on the node',
              'create': 'create %s'}
    WRITES = ('update', 'destroy', 'create')

    def __init__(self, controller, store, wait_label, names=None,
                 kind='instance'):
        self.controller = controller
        self.store = store
        self.wait_label = wait_label
        self.names = names or Names([])
        self.kind = kind

    def __call__(self, op, uuid, guard=None):
        uuids = self.store.uuids() if op == 'list' else [uuid]
        resource = {self.names('%s:%s' % (self.kind, u)) for u in uuids}
        if op in ('list', 'create'):
            resource.add('%s:*' % self.kind)
        label = (self.wait_label if op == 'wait'
                 else self.LABELS[op] % self.kind)
        return self.controller.step(
            self.kind, frozenset(resource),
            access=model.WRITE if op in self.WRITES else model.READ,
            label=label, guard=guard)


class LockStepper(object):
    """A host's locks' interceptor: acquire is enabled while it is free.

    Acquiring and releasing both write the lock's resource, so the lock
    is free iff the last of them released it (:attr:`MODEL`).

    :param host: the host whose :class:`~shelvefix.utils.Locks` these are
    :param names: a :class:`Names` (lock names may be uuids)
    """

    MODEL = guards.LockModel(release='release lock ')

    def __init__(self, controller, host, names):
        self.controller = controller
        self.host = host
        self.names = names

    def __call__(self, op, name, held):
        resource = frozenset(['lock:%s:%s' % (self.host, self.names(name))])
        guard = (lambda: not held()) if op == 'acquire' else None
        return self.controller.step(
            'lock', resource, access=model.WRITE,
            label='%s lock %s' % (op, self.names(name)), guard=guard,
            guard_model=self.MODEL if guard is not None else None)


class RpcStepper(object):
    """The RPC transport's interceptor: casts and (guarded) receives.

    Both write the queue's resource; a message is waiting iff the casts
    outnumber the receives (:attr:`MODEL`).
    """

    MODEL = guards.QueueModel(put='cast to ', take='receive on ')

    def __init__(self, controller):
        self.controller = controller

    def __call__(self, op, queue, guard=None):
        topic, server = queue
        label = ('cast to %s.%s' if op == 'cast'
                 else 'receive on %s.%s') % (topic, server)
        return self.controller.step(
            'rpc', frozenset(['rpc:%s.%s' % (topic, server)]),
            access=model.WRITE, label=label, guard=guard,
            guard_model=self.MODEL if guard is not None else None)
