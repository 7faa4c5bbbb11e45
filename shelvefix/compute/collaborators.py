"""Default collaborators of the compute manager, for running without nova.

None of these touches a hypervisor, neutron or cinder. Each records what it
was asked to do (``calls``), so a test or the command line can show the
sequence, and does nothing else. Pass real implementations (or nova's) to
``ComputeManager`` to do real work.
"""

import collections
import threading

from oslo_log import log as logging

from shelvefix.compute import power_state
from shelvefix import exception

LOG = logging.getLogger(__name__)

PowerInfo = collections.namedtuple('PowerInfo', ['state'])


class _Recorder(object):
    def __init__(self):
        self.calls = []
        self._lock = threading.Lock()

    def _record(self, name, *args):
        with self._lock:
            self.calls.append((name,) + args)


class DriverFailed(Exception):
    """A virt driver call failed, as a test or the race lab asked."""


class RecordingDriver(_Recorder):
    """A virt driver that only records calls and tracks power state.

    :param failing: names of methods that raise :class:`DriverFailed`
        (e.g. ``('confirm_migration',)``, bug 1821594's trigger)
    """

    def __init__(self, failing=()):
        super(RecordingDriver, self).__init__()
        self._power = {}
        self.failing = frozenset(failing)

    def _call(self, name, instance):
        self._record(name, instance.uuid)
        if name in self.failing:
            raise DriverFailed('%s failed for instance %s'
                               % (name, instance.uuid))

    def power_off(self, instance, timeout=0, retry_interval=0):
        self._record('power_off', instance.uuid, timeout, retry_interval)
        self._power[instance.uuid] = power_state.SHUTDOWN

    def power_on(self, context, instance, network_info,
                 block_device_info=None, accel_info=None):
        self._record('power_on', instance.uuid)
        self._power[instance.uuid] = power_state.RUNNING

    def get_info(self, instance):
        self._record('get_info', instance.uuid)
        return PowerInfo(self._power.get(instance.uuid,
                                         instance.power_state))

    def destroy(self, context, instance, network_info,
                block_device_info=None, destroy_disks=True):
        self._record('destroy', instance.uuid)
        self._power[instance.uuid] = power_state.NOSTATE

    def spawn(self, context, instance, image_meta, injected_files=None,
              admin_password=None, allocations=None, network_info=None,
              block_device_info=None, accel_info=None):
        self._call('spawn', instance)
        self._power[instance.uuid] = power_state.RUNNING

    # -- moves

    def migrate_disk_and_power_off(self, context, instance, dest, flavor,
                                   network_info, block_device_info=None,
                                   timeout=0, retry_interval=0):
        self._call('migrate_disk_and_power_off', instance)
        self._power[instance.uuid] = power_state.SHUTDOWN
        return '{}'

    def finish_migration(self, context, migration, instance, disk_info,
                         network_info, image_meta, resize_instance=True,
                         allocations=None, block_device_info=None,
                         power_on=True):
        self._call('finish_migration', instance)
        self._power[instance.uuid] = power_state.RUNNING

    def confirm_migration(self, context, migration, instance, network_info):
        self._call('confirm_migration', instance)

    def finish_revert_migration(self, context, instance, network_info,
                                migration, block_device_info=None,
                                power_on=True):
        self._call('finish_revert_migration', instance)
        self._power[instance.uuid] = power_state.RUNNING

    def cleanup(self, context, instance, network_info,
                block_device_info=None, destroy_disks=True,
                migrate_data=None, destroy_vifs=True, destroy_secrets=True):
        """What a destroyed guest left on the host (its disks) goes."""
        self._call('cleanup', instance)

    def rebuild(self, context, instance, image_meta, injected_files=None,
                admin_password=None, allocations=None, network_info=None,
                block_device_info=None, evacuate=True):
        self._call('rebuild', instance)
        self._power[instance.uuid] = power_state.RUNNING

    # -- live migration, as libvirt's driver takes part in it

    def check_can_live_migrate_destination(self, context, instance,
                                           src_compute_info, dst_compute_info,
                                           block_migration=False,
                                           disk_over_commit=False):
        """The destination's check: migrate data for storage both share."""
        self._call('check_can_live_migrate_destination', instance)
        return {'block_migration': bool(block_migration),
                'is_shared_instance_path': True}

    def cleanup_live_migration_destination_check(self, context,
                                                 dest_check_data):
        self._record('cleanup_live_migration_destination_check')

    def check_can_live_migrate_source(self, context, instance,
                                      dest_check_data,
                                      block_device_info=None):
        """The source's check: the destination's data, accepted."""
        self._call('check_can_live_migrate_source', instance)
        return dest_check_data

    def pre_live_migration(self, context, instance, block_device_info,
                           network_info, disk_info, migrate_data):
        self._call('pre_live_migration', instance)
        return migrate_data

    def live_migration(self, context, instance, dest, post_method,
                       recover_method, block_migration=False,
                       migrate_data=None):
        """Move the guest to ``dest``, then call back as libvirt's does.

        ``post_method`` once the guest runs there; or, if ``live_migration``
        is one of the failing calls, ``recover_method`` (the guest still
        runs here), without raising, as libvirt's migration job reports a
        failed migration.
        """
        self._record('live_migration', instance.uuid, dest)
        if 'live_migration' in self.failing:
            recover_method(context, instance, dest, migrate_data)
            return
        post_method(context, instance, dest, block_migration, migrate_data)

    def live_migration_abort(self, instance):
        self._call('live_migration_abort', instance)

    def post_live_migration(self, context, instance, block_device_info,
                            migrate_data=None):
        self._record('post_live_migration', instance.uuid)
        self._power[instance.uuid] = power_state.NOSTATE

    def post_live_migration_at_source(self, context, instance, network_info):
        self._record('post_live_migration_at_source', instance.uuid)

    def post_live_migration_at_destination(self, context, instance,
                                           network_info,
                                           block_migration=False,
                                           block_device_info=None):
        self._call('post_live_migration_at_destination', instance)
        self._power[instance.uuid] = power_state.RUNNING

    def rollback_live_migration_at_source(self, context, instance,
                                          migrate_data):
        self._record('rollback_live_migration_at_source', instance.uuid)

    def rollback_live_migration_at_destination(self, context, instance,
                                               network_info,
                                               block_device_info,
                                               destroy_disks=True,
                                               migrate_data=None):
        self._record('rollback_live_migration_at_destination',
                     instance.uuid)

    def get_volume_connector(self, instance):
        return {'host': instance.host, 'initiator': 'iqn.shelvefix:%s'
                % instance.host}


class RecordingNetworkAPI(_Recorder):
    """A network API with no ports; records what it is asked.

    :param binding_fails: ``setup_instance_network_on_host`` raises
        ``PortBindingFailed``, as neutron failing to bind a port on the
        host makes nova's do (bug 1862633's trigger)
    """

    def __init__(self, binding_fails=False):
        super(RecordingNetworkAPI, self).__init__()
        self.binding_fails = binding_fails

    def setup_instance_network_on_host(self, context, instance, host,
                                       migration=None,
                                       provider_mappings=None):
        self._record('setup_instance_network_on_host', instance.uuid, host)
        if self.binding_fails:
            raise exception.PortBindingFailed(
                port_id='port-of-%s' % instance.uuid)

    def get_instance_nw_info(self, context, instance):
        self._record('get_instance_nw_info', instance.uuid)
        return []

    def unbind_ports(self, context, ports, detach=True):
        self._record('unbind_ports', tuple(ports), detach)

    def setup_networks_on_host(self, context, instance, host=None,
                               teardown=False):
        self._record('setup_networks_on_host', instance.uuid, host, teardown)

    def migrate_instance_start(self, context, instance, migration):
        self._record('migrate_instance_start', instance.uuid)

    def migrate_instance_finish(self, context, instance, migration,
                                provider_mappings=None):
        self._record('migrate_instance_finish', instance.uuid)

    def cleanup_instance_network_on_host(self, context, instance, host):
        """The instance's ports' bindings to ``host`` are deleted."""
        self._record('cleanup_instance_network_on_host', instance.uuid, host)


class RecordingVolumeAPI(_Recorder):
    """A volume API with no volumes unless given block device mappings."""

    def __init__(self, bdms=None):
        super(RecordingVolumeAPI, self).__init__()
        self._bdms = bdms or {}

    def get_bdms(self, context, instance_uuid):
        return list(self._bdms.get(instance_uuid, []))

    def terminate_connection(self, context, volume_id, connector):
        self._record('terminate_connection', volume_id, connector['host'])


class LoggingNotifier(_Recorder):
    """Logs notifications at INFO instead of sending them on a bus."""

    def info(self, context, event_type, payload):
        self._record(event_type, payload.get('instance_id'))
        LOG.info('Notification %(event)s: %(payload)s',
                 {'event': event_type, 'payload': payload})


class SchedulerQueryClient(_Recorder):
    """Keeps the scheduler's per-host instance info in memory."""

    def __init__(self):
        super(SchedulerQueryClient, self).__init__()
        self.instance_info = collections.defaultdict(set)

    def update_instance_info(self, context, host_name, instance_info):
        self._record('update_instance_info', host_name)
        self.instance_info[host_name].add(instance_info.uuid)

    def delete_instance_info(self, context, host_name, instance_uuid):
        self._record('delete_instance_info', host_name, instance_uuid)
        self.instance_info[host_name].discard(instance_uuid)
