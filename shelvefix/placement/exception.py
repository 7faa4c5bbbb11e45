"""Domain exceptions of the placement double's state.

They know nothing about HTTP. Their messages are the ones placement's own
exceptions carry, because placement pastes ``str(exc)`` into the ``detail``
of its error responses and clients read those details.
"""


class PlacementStateError(Exception):
    """Base class; ``msg_fmt`` is formatted with the keyword arguments.

    :param message: a ready message, instead of formatting ``msg_fmt``.
    """

    msg_fmt = 'An unknown exception occurred.'

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        super(PlacementStateError, self).__init__(
            message or self.msg_fmt % kwargs)


class NotFound(PlacementStateError):
    """Something the request names does not exist."""

    msg_fmt = 'Resource could not be found.'


class ResourceProviderNotFound(NotFound):
    """No provider with that uuid."""

    msg_fmt = 'No resource provider with uuid %(uuid)s found'


class ResourceClassNotFound(NotFound):
    """The resource class is neither standard nor known custom."""

    msg_fmt = 'No such resource class %(name)s.'


class InventoryNotFound(NotFound):
    """The provider has no inventory of that class."""

    msg_fmt = 'No inventory of class %(resource_class)s found.'


class ProviderNameExists(PlacementStateError):
    """Another provider already has that name."""

    msg_fmt = 'Conflicting resource provider name: %(name)s already exists.'


class ProviderUuidExists(PlacementStateError):
    """Another provider already has that uuid."""

    msg_fmt = 'Conflicting resource provider uuid: %(uuid)s already exists.'


class ProviderActionError(PlacementStateError):
    """A provider create or update is refused (bad parent, loop...)."""

    msg_fmt = 'Object action %(action)s failed because: %(reason)s'


class ResourceProviderInUse(PlacementStateError):
    """The provider still has allocations."""

    msg_fmt = 'Resource provider has allocations.'


class CannotDeleteParentResourceProvider(PlacementStateError):
    """The provider still has children."""

    msg_fmt = ('Cannot delete resource provider that is a parent of '
               'another. Delete child providers first.')


class ProviderGenerationConflict(PlacementStateError):
    """The caller's view of the provider generation is stale."""

    msg_fmt = 'resource provider generation conflict'


def sqlalchemy_version():
    """The version SQLAlchemy writes into its error links (``20``: 2.0).

    The installed SQLAlchemy's, when there is one (it is the one real
    placement beside the double runs on); else 2.0's.
    """
    try:
        import sqlalchemy
    except ImportError:
        return '20'
    return ''.join(sqlalchemy.__version__.split('.')[:2])


class InventoryExists(PlacementStateError):
    """An inventory of that class is already on the provider.

    Placement has no exception for this: its database refuses the second
    row and the driver's error, as SQLAlchemy words it, is the message.
    This is its wording on sqlite, the database of placement's fixture,
    the refused row's values included.

    :param parameters: the row: provider id, resource class id, the six
        inventory values, the insert's time (``YYYY-MM-DD hh:mm:ss.ffffff``).
    """

    msg_fmt = ('(sqlite3.IntegrityError) UNIQUE constraint failed: '
               'inventories.resource_provider_id, '
               'inventories.resource_class_id\n'
               '[SQL: INSERT INTO inventories (resource_provider_id, '
               'resource_class_id, total, reserved, min_unit, max_unit, '
               'step_size, allocation_ratio, created_at) VALUES '
               '(?, ?, ?, ?, ?, ?, ?, ?, ?)]\n'
               '[parameters: %(parameters)r]\n'
               '(Background on this error at: '
               'https://sqlalche.me/e/%(version)s/gkpj)')

    def __init__(self, parameters):
        super(InventoryExists, self).__init__(
            parameters=tuple(parameters), version=sqlalchemy_version())


class InvalidInventory(PlacementStateError):
    """The inventory cannot hold (or does not exist for) an allocation."""

    msg_fmt = ("Inventory for '%(resource_class)s' on "
               "resource provider '%(resource_provider)s' invalid.")


class InvalidAllocationCapacityExceeded(InvalidInventory):
    """The allocation does not fit in the remaining capacity."""

    msg_fmt = ("Unable to create allocation for '%(resource_class)s' on "
               "resource provider '%(resource_provider)s'. The requested "
               "amount would exceed the capacity.")


class InvalidAllocationConstraintsViolated(InvalidInventory):
    """The amount breaks min_unit, max_unit or step_size."""

    msg_fmt = ("Unable to create allocation for '%(resource_class)s' on "
               "resource provider '%(resource_provider)s'. The requested "
               "amount would violate inventory constraints.")


class InvalidInventoryCapacity(InvalidInventory):
    """reserved >= total (before microversion 1.26)."""

    msg_fmt = ("Invalid inventory for '%(resource_class)s' on "
               "resource provider '%(resource_provider)s'. "
               "The reserved value is greater than or equal to total.")


class InvalidInventoryCapacityReservedCanBeTotal(InvalidInventoryCapacity):
    """reserved > total (from microversion 1.26)."""

    msg_fmt = ("Invalid inventory for '%(resource_class)s' on "
               "resource provider '%(resource_provider)s'. "
               "The reserved value is greater than total.")


class InventoryInUse(InvalidInventory):
    """Removing inventory that allocations still consume."""

    msg_fmt = ("Inventory for '%(resource_classes)s' on "
               "resource provider '%(resource_provider)s' in use.")


class ConsumerGenerationConflict(PlacementStateError):
    """The caller's consumer generation is not the current one."""

    def __init__(self, expected, got):
        self.expected = expected
        self.got = got
        super(ConsumerGenerationConflict, self).__init__(
            'consumer generation conflict - expected %s but got %s'
            % ('null' if expected is None else expected, got))


class AllocationProviderNotFound(PlacementStateError):
    """An allocation names a provider that does not exist."""

    msg_fmt = ("Allocation for resource provider '%(rp_uuid)s' "
               "that does not exist.")


class DatabaseError(PlacementStateError):
    """A statement failed in the database (only ever injected here).

    Placement lets such errors through to its fault wrapper, which answers
    500 with the error's text; the double does the same.
    """

    msg_fmt = ('(sqlite3.OperationalError) database is locked\n'
               '[SQL: %(statement)s]')


class TraitNotFound(NotFound):
    """A trait name that is neither standard nor a known custom trait."""

    msg_fmt = 'No such trait(s): %(name)s.'


class ResourceClassExists(PlacementStateError):
    """A resource class of that name already exists."""

    msg_fmt = 'Resource class %(resource_class)s already exists.'


class ResourceClassCannotDeleteStandard(PlacementStateError):
    """Standard resource classes cannot be deleted."""

    msg_fmt = 'Cannot delete standard resource class %(resource_class)s.'


class ResourceClassCannotUpdateStandard(PlacementStateError):
    """Standard resource classes cannot be renamed."""

    msg_fmt = 'Cannot update standard resource class %(resource_class)s.'


class ResourceClassInUse(PlacementStateError):
    """A provider still has inventory of the resource class."""

    msg_fmt = ('Cannot delete resource class %(resource_class)s. '
               'Class is in use in inventory.')


class TraitCannotDeleteStandard(PlacementStateError):
    """Standard traits cannot be deleted."""

    msg_fmt = 'Cannot delete standard trait %(name)s.'


class TraitInUse(PlacementStateError):
    """A provider still has the trait."""

    msg_fmt = 'The trait %(name)s is in use by a resource provider.'


class ReshapeGenerationConflict(PlacementStateError):
    """The reshaper was given a stale provider generation.

    Only the handler's early check, before the transaction, reads so;
    inside it a stale generation is
    :class:`ResourceProviderConcurrentUpdateDetected`.
    """

    msg_fmt = ('resource provider generation conflict for provider '
               '%(uuid)s: actual: %(actual)s, given: %(given)s')


class ResourceProviderConcurrentUpdateDetected(PlacementStateError):
    """A provider's generation moved while a write was under way.

    Placement raises it when its conditional generation update matches no
    row: another request wrote the provider after this one read it.
    """

    msg_fmt = ('Another thread concurrently updated the resource provider '
               'data. Please retry your update')
