"""What one step of ``_shelve_offload_instance`` does, as the check sees it.

The check follows one object, the instance being offloaded, through the
method and the ``ComputeManager`` helpers it calls. A :class:`State` holds
what a path has done so far:

* ``freed``: the instance's allocations were freed (a call of
  ``delete_allocation_for_shelve_offloaded_instance`` given the instance,
  or of ``delete_allocation_for_instance`` given its uuid);
* ``offloaded``: how sure it is that the instance's ``vm_state`` is
  ``SHELVED_OFFLOADED`` in memory (a level of
  :mod:`shelvefix.novacheck.values`), so that a save makes it visible;
* ``bindings``: which names hold the instance, its uuid, the state's value,
  its bound ``save`` or a free method (see
  :func:`shelvefix.novacheck.values.classify`);
* ``maybe_freed``: why the allocations may have been freed where the check
  cannot see it (a free in a helper deeper than it reads, or in a function
  handed to someone else), or None.

:class:`Semantics` applies a step to a state and says what happened, as
:class:`Event` objects: frees, state changes, saves, and the calls that
may save the instance behind the check's back.
"""

import ast
import collections

from shelvefix.novacheck import values

# Event kinds.
FREE = 'free'
OTHER_FREE = 'other-free'
MAY_FREE = 'may-free'
SET = 'set'
SAVE = 'save'
MAY_SAVE = 'may-save'
ALIAS = 'alias'

State = collections.namedtuple('State',
                               'freed offloaded bindings maybe_freed')


class Event(collections.namedtuple('Event', 'kind level what')):
    """Something a step did.

    :ivar kind: :data:`FREE`, :data:`OTHER_FREE`, :data:`MAY_FREE`,
        :data:`SET`, :data:`SAVE`, :data:`MAY_SAVE` or :data:`ALIAS`
    :ivar level: for SET the new ``offloaded`` level; for SAVE and
        MAY_SAVE the level the state had when saved
    :ivar what: a few words for the path display
    """


def initial_state(instance_key):
    """Nothing done yet; ``instance_key`` names the instance."""
    return State(False, values.NO,
                 frozenset([(instance_key, values.INSTANCE)]), None)


def forget(state, live):
    """``state`` without the names of scopes no longer running.

    A helper left by an exception never reaches its ``leave`` step; its
    names must not tell two otherwise equal states apart.
    """
    kept = frozenset(b for b in state.bindings
                     if not isinstance(b[0][0], int) or b[0][0] in live)
    if len(kept) == len(state.bindings):
        return state
    return state._replace(bindings=kept)


def _kind(expr, step, state):
    return values.classify(expr, step.scope, state.bindings)


def _given(call):
    return list(call.args) + [k.value for k in call.keywords]


class Semantics(object):
    """Applies steps (see :mod:`shelvefix.novacheck.cfg`) to states."""

    def apply(self, step, state):
        """The state after ``step`` and the events it produced."""
        handler = getattr(self, '_op_' + step.op[0].replace('-', '_'))
        return handler(step, state, *step.op[1:])

    def _op_pass(self, step, state, *ignored):
        return state, ()

    _op_test = _op_exit = _op_raise = _op_return = _op_pass

    def _op_assign(self, step, state, targets, value):
        happened = []
        kind = _kind(value, step, state)
        for target in targets:
            state = self._bind(step, state, target, value, kind, happened)
        return state, tuple(happened)

    def _op_unbind(self, step, state, targets):
        for target in targets:
            state = self._bind(step, state, target, None, None, [])
        return state, ()

    def _op_loop_bind(self, step, state, target, iterable):
        kind = None
        if isinstance(iterable, (ast.List, ast.Tuple, ast.Set)):
            kinds = set(_kind(e, step, state) for e in iterable.elts)
            kind = kinds.pop() if len(kinds) == 1 else None
        return self._bind(step, state, target, None, kind, []), ()

    def _op_revert_save(self, step, state, scope):
        """``@reverts_task_state`` saving the instance after an exception."""
        kind = values.classify(ast.Name(id='instance', ctx=ast.Load()),
                               scope, state.bindings)
        if kind != values.INSTANCE:
            return state, ()
        return self._save(state, [])

    def _op_leave(self, step, state, scope_id):
        bindings = frozenset(b for b in state.bindings
                             if b[0][0] != scope_id)
        return state._replace(bindings=bindings), ()

    def _op_bind(self, step, state, scope, function, call, caller):
        """Parameters of an inlined function from the call's arguments."""
        happened = []
        bindings = set(state.bindings)
        for param, value, kind in values.arguments(function, call, caller,
                                                   state.bindings):
            if kind is None:
                continue
            bindings.add((scope.key(param), kind))
            renamed = not (isinstance(value, ast.Name) and value.id == param)
            if kind == values.INSTANCE and renamed:
                happened.append(Event(ALIAS, None, '%s is the instance'
                                      % param))
        return state._replace(bindings=frozenset(bindings)), tuple(happened)

    def _bind(self, step, state, target, value, kind, happened):
        """``target = value`` where ``value`` is of ``kind``."""
        if isinstance(target, (ast.Tuple, ast.List)):
            parts = None
            if (isinstance(value, (ast.Tuple, ast.List)) and
                    len(value.elts) == len(target.elts)):
                parts = value.elts
            for i, element in enumerate(target.elts):
                part = parts[i] if parts else None
                state = self._bind(step, state, element, part,
                                   _kind(part, step, state), happened)
            return state
        if isinstance(target, ast.Starred):
            return self._bind(step, state, target.value, None, None,
                              happened)
        owner = field = None
        if isinstance(target, ast.Attribute):
            owner, field = target.value, target.attr
        elif (isinstance(target, ast.Subscript) and
              isinstance(target.slice, ast.Constant)):
            owner, field = target.value, target.slice.value
        if (field == 'vm_state' and
                _kind(owner, step, state) == values.INSTANCE):
            return self._set(state, values.level_of(kind), happened)
        key = values.name_key(target, step.scope)
        if key is None:
            return state
        bindings = frozenset(b for b in state.bindings if b[0] != key)
        if kind is None and key[0] == 'self':
            # No longer what the class made it (the resource tracker...).
            kind = values.REBOUND
        if kind is not None:
            bindings |= {(key, kind)}
            if kind == values.INSTANCE:
                happened.append(Event(ALIAS, None, '%s is the instance'
                                      % ast.unparse(target)))
        return state._replace(bindings=bindings)

    def _set(self, state, level, happened):
        happened.append(Event(SET, level, {
            values.YES: 'sets the state', values.MAYBE: 'may set the state',
            values.NO: 'sets another state'}[level]))
        return state._replace(offloaded=level)

    def _save(self, state, happened):
        happened.append(Event(SAVE, state.offloaded, 'saves it'))
        return state, tuple(happened)

    def _op_call(self, step, state, call, escaped, undefined):
        """A call the check does not follow into.

        ``escaped`` describes the nested functions and lambdas handed to
        it; ``undefined`` is true for a ``self.`` method the class lacks.
        """
        happened = []
        func = call.func
        kind = _kind(func, step, state)
        if kind == values.FREER:
            return self._free(step, state, call, happened)
        if kind == values.UNTRUSTED_FREER:
            return self._untrusted_free(step, state, call, happened)
        if kind == values.SAVER:
            return self._save(state, happened)
        if (isinstance(func, ast.Attribute) and func.attr == 'update' and
                _kind(func.value, step, state) == values.INSTANCE):
            return self._update(step, state, call, happened)
        if isinstance(func, ast.Name) and func.id == 'setattr':
            return self._setattr(step, state, call, happened)
        updates = values.callee_name(call) == 'self.' + values.UPDATE_AND_SAVE
        if updates or undefined:
            # _instance_update sets the fields given and saves; another
            # helper of the class given vm_state=... is taken to do the same.
            level = values.fields_level(values.keywords_kind(
                call.keywords, step.scope, state.bindings))
            if level is not None:
                state = self._set(state, level, happened)
            if updates or level is not None:
                return self._save(state, happened)
        self._escapes(step, state, call, happened)
        for function, frees, saves in escaped:
            if frees:
                why = ('%s may free the allocations when it is called'
                       % function)
                happened.append(Event(MAY_FREE, None, why))
                state = state._replace(maybe_freed=why)
            if saves and self._pending(state):
                happened.append(Event(MAY_SAVE, state.offloaded,
                                      '%s may save the instance when it is '
                                      'called' % function))
        return state, tuple(happened)

    def _op_opaque(self, step, state, call, frees, why):
        """A ComputeManager helper the check does not read."""
        happened = []
        self._escapes(step, state, call, happened, why)
        if frees:
            happened.append(Event(MAY_FREE, None, why))
            state = state._replace(maybe_freed=why)
        return state, tuple(happened)

    @staticmethod
    def _pending(state):
        """SHELVED_OFFLOADED (maybe) set in memory, allocations not freed."""
        return state.offloaded != values.NO and not state.freed

    def _escapes(self, step, state, call, happened, why=None):
        """The instance handed to code the check does not read."""
        name = values.callee_name(call) or ast.unparse(call.func)
        if (name.split('.')[0] in values.HARMLESS_CALLEES or
                not self._pending(state)):
            return
        if (isinstance(call.func, ast.Attribute) and
                _kind(call.func.value, step, state) == values.INSTANCE):
            return  # the instance's own methods; save is handled above
        if any(values.holds_instance(v, step.scope, state.bindings)
               for v in _given(call)):
            happened.append(Event(MAY_SAVE, state.offloaded, why or (
                '%s is given the instance and may save it' % name)))

    def _free(self, step, state, call, happened):
        given = _given(call)
        kinds = [_kind(v, step, state) for v in given]
        if values.INSTANCE in kinds or values.UUID in kinds:
            happened.append(Event(FREE, None, 'frees allocations'))
            return state._replace(freed=True), tuple(happened)
        consumer = ', '.join(ast.unparse(v) for v in given[1:] or given)
        happened.append(Event(OTHER_FREE, None, 'frees the allocations of '
                              '%s, not of the instance'
                              % (consumer or 'nothing')))
        return state, tuple(happened)

    def _untrusted_free(self, step, state, call, happened):
        """A free method called on what may not free anything at all."""
        given = _given(call)
        kinds = [_kind(v, step, state) for v in given]
        if values.INSTANCE not in kinds and values.UUID not in kinds:
            return self._free(step, state, call, happened)
        if isinstance(call.func, ast.Attribute):
            what = '%s is called on %s' % (call.func.attr,
                                           ast.unparse(call.func.value))
        else:
            what = '%s is a free method of some object' % call.func.id
        why = ('%s, which the check does not know to be nova\'s resource '
               'tracker or report client' % what)
        happened.append(Event(MAY_FREE, None, why))
        return state._replace(maybe_freed=why), tuple(happened)

    def _update(self, step, state, call, happened):
        if call.args:
            kind = _kind(call.args[0], step, state)
        else:
            kind = values.keywords_kind(call.keywords, step.scope,
                                        state.bindings)
        level = values.fields_level(kind)
        if level is not None:
            state = self._set(state, level, happened)
        return state, tuple(happened)

    def _setattr(self, step, state, call, happened):
        args = call.args
        if len(args) != 3 or _kind(args[0], step, state) != values.INSTANCE:
            return state, ()
        if not isinstance(args[1], ast.Constant):
            level = values.MAYBE
        elif args[1].value == 'vm_state':
            level = values.level_of(_kind(args[2], step, state))
        else:
            return state, ()
        return self._set(state, level, happened), tuple(happened)
