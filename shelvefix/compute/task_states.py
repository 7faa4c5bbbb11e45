"""Instance task_state values of the shelve and move paths (nova's strings)."""

SHELVING = 'shelving'
SHELVING_IMAGE_PENDING_UPLOAD = 'shelving_image_pending_upload'
SHELVING_IMAGE_UPLOADING = 'shelving_image_uploading'
SHELVING_OFFLOADING = 'shelving_offloading'
UNSHELVING = 'unshelving'
SPAWNING = 'spawning'
POWERING_ON = 'powering-on'
DELETING = 'deleting'
SOFT_DELETING = 'soft-deleting'

# Resize and cold migration.
RESIZE_PREP = 'resize_prep'
RESIZE_MIGRATING = 'resize_migrating'
RESIZE_MIGRATED = 'resize_migrated'
RESIZE_FINISH = 'resize_finish'
RESIZE_REVERTING = 'resize_reverting'
RESIZE_CONFIRMING = 'resize_confirming'
# Evacuation (a rebuild on another host).
REBUILDING = 'rebuilding'
REBUILD_BLOCK_DEVICE_MAPPING = 'rebuild_block_device_mapping'
REBUILD_SPAWNING = 'rebuild_spawning'
# Live migration.
MIGRATING = 'migrating'
# A build (the API's, then the compute host's).
SCHEDULING = 'scheduling'
NETWORKING = 'networking'
BLOCK_DEVICE_MAPPING = 'block_device_mapping'

#: The task states of an instance a resize or cold migration is moving.
resizing_states = (RESIZE_PREP, RESIZE_MIGRATING, RESIZE_MIGRATED,
                   RESIZE_FINISH)
#: The task states of an instance being rebuilt (on an evacuation's
#: destination, among others).
rebuild_states = (REBUILDING, REBUILD_BLOCK_DEVICE_MAPPING,
                  REBUILD_SPAWNING)

ALL_STATES = ((None, SHELVING, SHELVING_IMAGE_PENDING_UPLOAD,
               SHELVING_IMAGE_UPLOADING, SHELVING_OFFLOADING, UNSHELVING,
               SPAWNING, POWERING_ON, DELETING, SOFT_DELETING,
               RESIZE_REVERTING, RESIZE_CONFIRMING, MIGRATING, SCHEDULING,
               NETWORKING, BLOCK_DEVICE_MAPPING) +
              resizing_states + rebuild_states)
