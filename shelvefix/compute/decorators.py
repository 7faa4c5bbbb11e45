"""Decorators of the compute manager's RPC methods, as nova's.

* :func:`reverts_task_state`: on failure the instance's task state is
  cleared, so that a failed operation does not leave it claiming a task;
* :func:`errors_out_migration`: on failure the migration is saved as
  ``error``, so that no audit keeps counting a move that stopped.

Both find the ``instance`` or ``migration`` argument by name, however the
method is called (an RPC dispatch passes keywords).
"""

import functools
import inspect

from oslo_log import log as logging

from shelvefix import exception
from shelvefix.objects import migration as migration_obj

LOG = logging.getLogger(__name__)


def _argument(function, name, args, kwargs):
    bound = inspect.signature(function).bind_partial(*args, **kwargs)
    return bound.arguments.get(name)


def reverts_task_state(function):
    """On failure, clear the instance's task state, then re-raise.

    Like nova's decorator: an UnexpectedTaskStateError means someone else
    owns the task state now, so it is left alone.
    """
    @functools.wraps(function)
    def decorated(self, context, *args, **kwargs):
        try:
            return function(self, context, *args, **kwargs)
        except exception.UnexpectedTaskStateError as e:
            LOG.info('Task possibly preempted: %s', e)
            raise
        except Exception:
            instance = _argument(function, 'instance',
                                 (self, context) + args, kwargs)
            try:
                self._instance_update(context, instance, task_state=None)
            except Exception:
                LOG.exception('Failed to revert task state for instance '
                              '%s', getattr(instance, 'uuid', instance))
            raise
    return decorated


def errors_out_migration(function):
    """On failure, save the migration as ``error``, then re-raise."""
    @functools.wraps(function)
    def decorated(self, context, *args, **kwargs):
        try:
            return function(self, context, *args, **kwargs)
        except Exception:
            migration = _argument(function, 'migration',
                                  (self, context) + args, kwargs)
            if migration is not None:
                migration.status = migration_obj.ERROR
                try:
                    migration.save()
                except Exception:
                    LOG.debug('Could not save migration %s as failed',
                              migration.uuid, exc_info=True)
            raise
    return decorated
