"""Records the placement double keeps, and the snapshots it hands out.

The ``*Record`` classes are the mutable rows inside
:class:`~.state.PlacementState`; only the state touches them, under its
lock. Everything the state returns is an immutable
namedtuple snapshot (:class:`Provider`, :class:`Inventory`,
:class:`Consumer`), so a test can keep one around and compare it with a
later one.
"""

import collections
import datetime

import os_resource_classes

# The standard resource classes, in the order placement numbers them
# (their ids are their positions; that order shows in usage and
# error listings).
STANDARD_RESOURCE_CLASSES = tuple(os_resource_classes.STANDARDS)
# Placement numbers custom classes from here on.
FIRST_CUSTOM_RESOURCE_CLASS_ID = 10000
CUSTOM_PREFIX = os_resource_classes.CUSTOM_NAMESPACE

# The largest value an integer column holds; max_unit defaults to it.
MAX_INT = 2147483647

# Project and user a consumer gets when written before microversion 1.8
# (placement's [placement]incomplete_consumer_*_id defaults).
INCOMPLETE_CONSUMER_ID = '00000000-0000-0000-0000-000000000000'

INVENTORY_DEFAULTS = {
    'reserved': 0,
    'min_unit': 1,
    'max_unit': MAX_INT,
    'step_size': 1,
    'allocation_ratio': 1.0,
}

Consumer = collections.namedtuple(
    'Consumer', ['generation', 'project_id', 'user_id', 'consumer_type'])
Consumer.__doc__ = """Snapshot of a consumer record.

``consumer_type`` is None for a consumer never written at microversion
1.38 or later (placement shows it as ``unknown``).
"""

Provider = collections.namedtuple(
    'Provider', ['uuid', 'name', 'generation', 'parent_provider_uuid',
                 'root_provider_uuid', 'inventories'])
Provider.__doc__ = """Snapshot of a resource provider.

``inventories`` maps resource class to :class:`Inventory`, in the order
placement lists them.
"""


class Inventory(collections.namedtuple(
        'Inventory', ['total', 'reserved', 'min_unit', 'max_unit',
                      'step_size', 'allocation_ratio'])):
    """One inventory of a provider (a snapshot)."""

    __slots__ = ()

    @classmethod
    def build(cls, total, **fields):
        """An inventory with placement's defaults for what is not given.

        :param total: the total amount.
        :param fields: any of reserved, min_unit, max_unit, step_size,
            allocation_ratio.
        """
        values = dict(INVENTORY_DEFAULTS)
        values.update(fields)
        return cls(total=total, **values)

    def stored(self):
        """As the database holds it: its column is a float, 16 reads 16.0."""
        return self._replace(allocation_ratio=float(self.allocation_ratio))

    @property
    def capacity(self):
        """Usable amount: ``(total - reserved) * allocation_ratio``."""
        return int((self.total - self.reserved) * self.allocation_ratio)


def utcnow():
    """The current time, timezone aware (for Last-Modified)."""
    return datetime.datetime.now(datetime.timezone.utc)


class InventoryRecord(object):
    """A stored inventory: its values, its row id, when it was written.

    ``row_id`` is the id placement's (sqlite) database gives the row: one
    more than the highest in the table. Placement finds the providers
    with room for a class in that order.
    """

    def __init__(self, inventory, row_id=None):
        self.inventory = inventory.stored()
        self.row_id = row_id
        self.created_at = utcnow()
        self.updated_at = None

    def update(self, inventory):
        """Overwrite the values in place, as an UPDATE of the row would."""
        self.inventory = inventory.stored()
        self.updated_at = utcnow()


class ProviderRecord(object):
    """A stored resource provider.

    ``id`` is the internal id placement's database gives it (one more
    than the highest in use); ``aggregate_rows`` maps each aggregate uuid
    of ``aggregates`` to the id of its association row, given the same
    way. Placement's searches follow both.
    """

    def __init__(self, uuid, name, parent_uuid=None, provider_id=None):
        self.id = provider_id
        self.uuid = uuid
        self.name = name
        self.parent_uuid = parent_uuid
        self.generation = 0
        # Resource class -> InventoryRecord, in row insertion order.
        self.inventories = collections.OrderedDict()
        # Trait names and aggregate uuids the provider has.
        self.traits = set()
        self.aggregates = set()
        self.aggregate_rows = {}
        self.created_at = utcnow()
        self.updated_at = None

    def bump(self):
        """Increment the generation, as every provider write does."""
        self.generation += 1
        self.touch()

    def touch(self):
        """Record a modification time."""
        self.updated_at = utcnow()

    @property
    def last_modified(self):
        """``updated_at``, or ``created_at`` for a never-updated row."""
        return self.updated_at or self.created_at


class ConsumerRecord(object):
    """A stored consumer. A new one starts at generation 0."""

    def __init__(self, uuid, project_id, user_id, consumer_type=None):
        self.uuid = uuid
        self.project_id = project_id
        self.user_id = user_id
        self.consumer_type = consumer_type
        self.generation = 0

    def snapshot(self):
        """The immutable :class:`Consumer` view of this record."""
        return Consumer(self.generation, self.project_id, self.user_id,
                        self.consumer_type)


AllocationRow = collections.namedtuple(
    'AllocationRow', ['seq', 'consumer', 'provider', 'resource_class',
                      'used', 'created_at'])
AllocationRow.__doc__ = """One stored allocation (immutable: placement
never updates an allocation row, it deletes and re-inserts). ``seq`` is the
insertion order, which is the order placement lists allocations in."""
