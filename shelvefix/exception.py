"""Exceptions, named as nova names them.

Each exception formats ``msg_fmt`` with the keyword arguments it is raised
with, like ``nova.exception.NovaException``. Every placement failure is turned
into one of these by the report client, so callers never see an HTTP status.
"""


class ShelvefixException(Exception):
    """Base class: ``msg_fmt`` % kwargs becomes the message."""

    msg_fmt = 'An unknown exception occurred.'

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError) as e:
                # A missing keyword is a programming error in the raiser; say
                # so instead of hiding the original failure behind a KeyError.
                message = '%s (message could not be formatted: %r)' % (
                    self.msg_fmt, e)
        self.message = message
        super(ShelvefixException, self).__init__(message)

    def __str__(self):
        return self.message


class Invalid(ShelvefixException):
    msg_fmt = 'Bad input: %(reason)s'


class InvalidUUID(Invalid):
    msg_fmt = 'Expected a uuid but received %(uuid)s.'


class InvalidAllocationRequest(Invalid):
    msg_fmt = ('Invalid allocation request for consumer %(consumer_uuid)s: '
               '%(reason)s')


class InstanceUpdateConflict(ShelvefixException):
    msg_fmt = ('Conflict updating instance %(instance_uuid)s. '
               'Expected: %(expected)s. Actual: %(actual)s')


class UnexpectedTaskStateError(InstanceUpdateConflict):
    pass


class InstanceNotFound(ShelvefixException):
    msg_fmt = 'Instance %(instance_id)s could not be found.'


class MigrationNotFound(ShelvefixException):
    msg_fmt = 'Migration %(migration_id)s could not be found.'


class MigrationUpdateConflict(ShelvefixException):
    msg_fmt = ('Conflict updating migration %(migration_id)s. '
               'Expected: %(expected)s. Actual: %(actual)s')


class AllocationUpdateFailed(ShelvefixException):
    msg_fmt = ('Failed to update allocations for consumer %(consumer_uuid)s. '
               'Error: %(error)s')


class AllocationDeleteFailed(ShelvefixException):
    msg_fmt = ('Failed to delete allocations for consumer %(consumer_uuid)s. '
               'Error: %(error)s')


class ConsumerGenerationConflict(ShelvefixException):
    """Placement refused a write: the consumer changed since it was read.

    Not raised on its own: :class:`AllocationUpdateConflict` and
    :class:`AllocationDeleteConflict` carry it, so that callers written
    for nova's ``AllocationUpdateFailed`` / ``AllocationDeleteFailed`` still
    catch them, and callers that care about the race can tell it from any
    other failure without reading placement's text. The ``placement_error``
    keyword argument holds placement's error
    (:class:`~shelvefix.scheduler.client.errors.PlacementError`).
    """

    msg_fmt = ('Consumer generation conflict for consumer '
               '%(consumer_uuid)s: %(error)s')


class AllocationUpdateConflict(AllocationUpdateFailed,
                               ConsumerGenerationConflict):
    """A claim or allocation write lost a consumer generation race."""


class AllocationDeleteConflict(AllocationDeleteFailed,
                               ConsumerGenerationConflict):
    """Freeing allocations lost a consumer generation race."""


class AllocationMoveFailed(ConsumerGenerationConflict):
    """Moving allocations between consumers lost a consumer generation race.

    nova raises this only for that race (a change to either consumer
    between reading them and the move), so here it is a
    :class:`ConsumerGenerationConflict` itself. Raised with
    ``source_consumer``, ``target_consumer``, ``error`` and
    ``placement_error``.
    """

    msg_fmt = ('Failed to move allocations from consumer '
               '%(source_consumer)s to consumer %(target_consumer)s. '
               'Error: %(error)s')


class ConsumerAllocationRetrievalFailed(ShelvefixException):
    msg_fmt = ('Failed to retrieve allocations for consumer '
               '%(consumer_uuid)s: %(error)s')


class ResourceProviderCreationFailed(ShelvefixException):
    msg_fmt = 'Failed to create resource provider %(name)s: %(error)s'


class ResourceProviderRetrievalFailed(ShelvefixException):
    msg_fmt = 'Failed to get resource provider with UUID %(uuid)s: %(error)s'


class ResourceProviderUpdateFailed(ShelvefixException):
    msg_fmt = ('Failed to update resource provider via URL %(url)s: '
               '%(error)s')


class ResourceProviderUpdateConflict(ResourceProviderUpdateFailed):
    """Placement refused a provider write: its generation moved on."""

    msg_fmt = ('Conflict updating resource provider via URL %(url)s: '
               '%(error)s')


class ResourceProviderTraitRetrievalFailed(ShelvefixException):
    """The traits of a provider could not be read from placement."""

    msg_fmt = 'Failed to get traits for resource provider %(uuid)s: %(error)s'


class ComputeHostNotFound(ShelvefixException):
    """No service or compute node record for that host (or node)."""

    msg_fmt = 'Compute host %(host)s could not be found.'


class ObjectActionError(ShelvefixException):
    """A record's action was refused: the row no longer is as expected."""

    msg_fmt = 'Object action %(action)s failed because: %(reason)s'


class NoValidHost(ShelvefixException):
    msg_fmt = 'No valid host was found. %(reason)s'


class PortBindingFailed(Invalid):
    msg_fmt = ('Binding failed for port %(port_id)s, please check neutron '
               'logs for more information.')


class AllocationCandidatesRetrievalFailed(ShelvefixException):
    msg_fmt = ('Failed to retrieve allocation candidates from placement API '
               'for filters: %(resource_request)s. Error: %(error)s')


class StressCleanupFailed(ShelvefixException):
    """A stress run could not remove from placement all it had created.

    Raised with ``left`` (what is left, for the message), ``providers`` and
    ``consumers`` (the uuids left) and ``error`` (why).
    """

    msg_fmt = ('could not remove from placement what the stress run '
               'created: %(left)s left (delete them by hand); %(error)s')


class InstanceInvalidState(Invalid):
    msg_fmt = ('Instance %(instance_uuid)s in %(attr)s %(state)s. Cannot '
               '%(method)s while the instance is in this state.')


class MigrationPreCheckError(ShelvefixException):
    msg_fmt = 'Migration pre-check error: %(reason)s'


class InvalidMigrationState(Invalid):
    msg_fmt = ('Migration %(migration_id)s state of instance '
               '%(instance_uuid)s is %(state)s. Cannot %(method)s while the '
               'migration is in this state.')


class BuildRequestNotFound(ShelvefixException):
    """The API's build request of a server is gone (deleted or built)."""

    msg_fmt = 'BuildRequest not found for instance %(uuid)s'


class InstanceMappingNotFound(ShelvefixException):
    """No instance mapping in the API database for that server."""

    msg_fmt = 'Instance %(uuid)s has no mapping to a cell.'


class RescheduledException(ShelvefixException):
    """A compute host could not build a server: another host may."""

    msg_fmt = ('Build of instance %(instance_uuid)s was re-scheduled: '
               '%(reason)s')


class BuildAbortException(ShelvefixException):
    """A compute host's build of a server ended; no other host will try."""

    msg_fmt = ('Build of instance %(instance_uuid)s aborted: %(reason)s')


class MaxRetriesExceeded(NoValidHost):
    """A rescheduled build found no alternate host left to claim."""

    msg_fmt = 'Exceeded maximum number of retries. %(reason)s'


class ResourceProviderAllocationRetrievalFailed(ShelvefixException):
    """Placement did not list the allocations against a provider."""

    msg_fmt = ('Failed to retrieve allocations for resource provider '
               '%(rp_uuid)s: %(error)s')
