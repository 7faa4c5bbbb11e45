"""Instance task_state values used on the shelve path (nova's strings)."""

SHELVING = 'shelving'
SHELVING_IMAGE_PENDING_UPLOAD = 'shelving_image_pending_upload'
SHELVING_IMAGE_UPLOADING = 'shelving_image_uploading'
SHELVING_OFFLOADING = 'shelving_offloading'
UNSHELVING = 'unshelving'
SPAWNING = 'spawning'
POWERING_ON = 'powering-on'
DELETING = 'deleting'

ALL_STATES = (None, SHELVING, SHELVING_IMAGE_PENDING_UPLOAD,
              SHELVING_IMAGE_UPLOADING, SHELVING_OFFLOADING, UNSHELVING,
              SPAWNING, POWERING_ON, DELETING)
