"""The race lab: the shelve/unshelve races run on the library's real code.

* :mod:`~shelvefix.race.scenario` - a shelved server, two hosts, the
  flavor, project and user every run uses (the offload-unshelve race);
* :mod:`~shelvefix.race.cloud` - two compute hosts, a conductor and a
  scheduler around one server (the unshelve and lifecycle scenarios);
* :mod:`~shelvefix.race.move_cloud` - the same around a server being
  resized or evacuated, with its migration record (the move scenarios);
* :mod:`~shelvefix.race.client` - the API side of an unshelve (the one
  copy of it);
* :mod:`~shelvefix.race.timeline` - placement requests and saves in one
  order, and the order rule;
* :mod:`~shelvefix.race.variants` - the corrected code and the pre-fix
  variants derived from it;
* :mod:`~shelvefix.race.steps` - where actors pause, and what each step
  touches;
* :mod:`~shelvefix.race.outcomes` - what went wrong in a run;
* :mod:`~shelvefix.race.program` - the scenarios as programs for the
  :mod:`~shelvefix.explorer`, the run of a two-host cloud written once
  (``CloudProgram``), and uncontrolled random runs
  (:mod:`~shelvefix.race.move_program` for the move scenarios);
* :mod:`~shelvefix.race.scenarios` - every scenario, once: its actors,
  start, cells and symptoms; a cell's program explored
  (:mod:`~shelvefix.race.random_runs`: run at random);
* :mod:`~shelvefix.race.live_migration` - the library's live migration
  run by the lab;
* :mod:`~shelvefix.race.targets` - whose code the actors run: the
  library's, or nova's (:mod:`shelvefix.nova`);
* :mod:`~shelvefix.race.report` - tables, timelines, Mermaid and JSON;
* :mod:`~shelvefix.race.stress` - K servers x M cycles under real
  concurrency;
* :mod:`~shelvefix.race.fault_matrix` - a fault at every placement
  request, nothing lost.

This package's own namespace holds only the lab's vocabulary, so that the
command line can offer its choices without loading the lab.
"""

# The code variants (see race.variants): the library, and the code before
# each fix. The two orderings of the shelve-offload are the first two.
CORRECTED = 'corrected'
LEGACY = 'legacy'
PRE_2025480 = 'pre-2025480'
PRE_1862633 = 'pre-1862633'
PRE_1879878 = 'pre-1879878'
PRE_1821594 = 'pre-1821594'
# The corrected code with one part as nova's latest release has it, where
# the race lab found a defect upstream has not fixed.
NOVA_REVERT = 'nova-revert'
NOVA_EVACUATE = 'nova-evacuate'
ORDERINGS = (CORRECTED, LEGACY)
VARIANTS = (CORRECTED, LEGACY, PRE_2025480, PRE_1862633, PRE_1879878,
            PRE_1821594, NOVA_REVERT, NOVA_EVACUATE)

# The targets (see race.targets): whose code the actors run.
LIBRARY = 'library'
NOVA = 'nova'
TARGETS = (LIBRARY, NOVA)

# The scenarios (see race.scenarios).
OFFLOAD_UNSHELVE = 'offload-unshelve'
UNSHELVE_PERIODIC = 'unshelve-periodic'
LIFECYCLE = 'lifecycle'
RESIZE_CONFIRM = 'resize-confirm'
RESIZE_REVERT = 'resize-revert'
EVACUATE = 'evacuate'
RESIZE_DELETE = 'resize-delete'
RESIZE_MIGRATE = 'resize-migrate'
RESIZE = 'resize'
SHELVE_API = 'shelve-api'
EVACUATE_DELETE = 'evacuate-delete'
SERVICE_DELETE = 'service-delete'
LIVE_MIGRATE = 'live-migrate'
LIVE_MIGRATE_ABORT = 'live-migrate-abort'
LIVE_MIGRATE_GROUP = 'live-migrate-group'
BUILD = 'build'
BUILD_DELETE = 'build-delete'
SERVICE_DISABLE = 'service-disable'
IRONIC_REBALANCE = 'ironic-rebalance'
CROSS_CELL_REVERT = 'cross-cell-revert'
CROSS_CELL_CONFIRM = 'cross-cell-confirm'
SCENARIOS = (OFFLOAD_UNSHELVE, UNSHELVE_PERIODIC, LIFECYCLE, RESIZE_CONFIRM,
             RESIZE_REVERT, EVACUATE, RESIZE_DELETE, RESIZE_MIGRATE, RESIZE,
             SHELVE_API, EVACUATE_DELETE, SERVICE_DELETE, LIVE_MIGRATE,
             LIVE_MIGRATE_ABORT, LIVE_MIGRATE_GROUP, BUILD, BUILD_DELETE,
             SERVICE_DISABLE, IRONIC_REBALANCE, CROSS_CELL_REVERT,
             CROSS_CELL_CONFIRM)
ALL = 'all'
DEFAULT_SCENARIO = OFFLOAD_UNSHELVE

# How compute frees the allocations: GET + PUT empty with the consumer
# generation (nova on Rocky, the bug's branch) or DELETE (nova since
# Ussuri, force=True).
GET_PUT = 'get-put'
DELETE = 'delete'
FREE_METHODS = (GET_PUT, DELETE)

# Faults a cell can inject into every run.
GHOST = 'ghost'
PORT_BINDING = 'port-binding'
CONFIRM_FAILS = 'confirm-fails'
REBUILD_FAILS = 'rebuild-fails'
SPAWN_FAILS = 'spawn-fails'
CONCURRENT_UPDATE = 'concurrent-update'
# The resize's steps failing: compute-2's prep_resize (its claim),
# compute-1's resize_instance, compute-2's finish_resize (their drivers).
PREP_FAILS = 'prep-fails'
RESIZE_FAILS = 'resize-fails'
FINISH_FAILS = 'finish-fails'
# An evacuation's: the destination's tracker refuses the rebuild claim.
CLAIM_FAILS = 'claim-fails'
# The evacuated server's old host was redeployed: its hypervisor no longer
# has the server's guest when its service starts again.
GUEST_LOST = 'guest-lost'
# A live migration's: the hypervisor fails the migration itself.
LIVE_MIGRATION_FAILS = 'live-migration-fails'
# ... or the first destination's pre-check refuses it (a third host is
# there for the retry).
PRECHECK_FAILS = 'precheck-fails'
FAULTS = (GHOST, PORT_BINDING, CONFIRM_FAILS, REBUILD_FAILS, SPAWN_FAILS,
          CONCURRENT_UPDATE, PREP_FAILS, RESIZE_FAILS, FINISH_FAILS,
          CLAIM_FAILS, GUEST_LOST, LIVE_MIGRATION_FAILS, PRECHECK_FAILS)
# A build's: compute-1's hypervisor fails the spawn (the build is
# rescheduled to compute-2); placement refuses the conductor's claim of the
# alternate host on that reschedule; compute-1's service restarts while
# the build waits for its claim.
BUILD_FAILS = 'build-fails'
ALTERNATE_CLAIM_FAILS = 'alternate-claim-fails'
COMPUTE_RESTARTS = 'compute-restarts'
# The build's server asks for a PCI device, and compute-1's spawn fails;
# two servers asking for PCI devices are scheduled at once by two workers.
PCI_BUILD_FAILS = 'pci-build-fails'
PCI_PARALLEL_BUILDS = 'pci-parallel-builds'
FAULTS += (BUILD_FAILS, ALTERNATE_CLAIM_FAILS, COMPUTE_RESTARTS,
           PCI_BUILD_FAILS, PCI_PARALLEL_BUILDS)
# Not a failure: compute-1's service starts disabled, and the API enables
# it again (service-disable).
ENABLED_AGAIN = 'enabled-again'
FAULTS += (ENABLED_AGAIN,)
