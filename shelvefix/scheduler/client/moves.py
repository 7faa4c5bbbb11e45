"""Report client calls that move allocations between consumers and hosts.

:class:`AllocationMoves` is mixed into ``SchedulerReportClient``. It holds
nova's ``move_allocations`` (hand a consumer's allocations to another
consumer in one ``POST /allocations``, as migrations and their reverts do)
and ``remove_provider_tree_from_instance_allocation`` (drop what a consumer
holds on one compute node's provider tree and keep the rest). Names,
signatures, return values and requests are nova's; what differs:

* A lost reply (a transport failure, a 5xx) is not reported as a failure
  when reading the consumers back shows the write took effect.
* Retries use the ``[placement]`` claim retry options and the client's
  injectable sleep and jitter (nova: four attempts, ``time.sleep``).
* ``remove_provider_tree_from_instance_allocation`` retries generation
  conflicts, consumer ones included, by reading the consumer again (nova's
  ``remove_resources_from_instance_allocation`` does this; nova's tree
  variant does not retry at all).
* ``move_allocations`` returns False, instead of failing on a missing key,
  when neither consumer holds anything.
"""

from oslo_log import log as logging

from shelvefix import exception
from shelvefix.scheduler.client import errors
from shelvefix.scheduler.client import providers
from shelvefix.scheduler.client import writes
from shelvefix import utils

LOG = logging.getLogger(__name__)

# The microversion of every request here: consumer generations (1.28),
# which POST /allocations (1.13) needs to empty one consumer safely.
# report.py has the same constant; importing it would be circular.
CONSUMER_GENERATION_VERSION = '1.28'


class _Reread(writes.ProviderGenerationConflict):
    """Internal: a conflict that reading the consumer again resolves.

    A subclass of the provider conflict so that ``_with_retries`` retries
    it as well.
    """


class _OutOfRetries(exception.ShelvefixException):
    """Internal: ``_with_retries`` gave up; the public calls return False."""

    msg_fmt = 'Gave up on consumer %(consumer_uuid)s: %(error)s'


class AllocationMoves(object):
    """Move-operation calls of ``SchedulerReportClient`` (a mixin).

    Expects the client's ``get_allocs_for_consumer``, ``post``,
    ``_put_allocations``, ``_json_or_raise`` (from ``ProviderCalls``) and
    ``_with_retries`` (from ``AllocationWrites``).
    """

    def get_providers_in_tree(self, context, uuid):
        """Every provider in the tree that holds provider ``uuid``.

        ``GET /resource_providers?in_tree={uuid}`` at microversion 1.14.

        :param context: the request context
        :param uuid: any provider of the tree (usually its root)
        :returns: placement's provider documents; an empty list if
            placement knows no provider ``uuid``
        :raises InvalidUUID: ``uuid`` is not a uuid
        :raises ResourceProviderRetrievalFailed: on any failure, transport
            failures included
        """
        utils.validate_uuid(uuid)
        body = self._json_or_raise(
            context, 'GET', '/resource_providers?in_tree=%s' % uuid,
            exception.ResourceProviderRetrievalFailed,
            version=providers.NESTED_PROVIDER_API_VERSION, uuid=uuid)
        return body['resource_providers']

    # -- move_allocations

    def move_allocations(self, context, source_consumer_uuid,
                         target_consumer_uuid):
        """Give the target consumer what the source consumer holds.

        Both consumers are read, then one ``POST /allocations`` (1.28)
        empties the source (at the generation read) and writes the
        source's allocations, project and user to the target (at the
        target's generation, null for a new consumer), replacing whatever
        the target held. Placement applies both or neither.

        * The target holds allocations and the source none: an earlier
          move is taken to have happened; nothing is written.
        * A resource provider generation conflict is retried from the
          reads, up to ``[placement] claim_retry_attempts`` attempts.
        * A lost reply (a transport failure, or a 5xx that may come from a
          proxy after placement committed): both consumers are read back;
          if the source holds nothing and the target holds exactly the
          resources the source held, the move took effect (True). If they
          hold anything else, or cannot be read, False: the move is not
          known to have happened.

        :param context: the request context
        :param source_consumer_uuid: the consumer giving up its allocations
        :param target_consumer_uuid: the consumer receiving them
        :returns: True if the allocations were moved (or already had been);
            False if placement refused for another reason, did not answer,
            the retries ran out, or the source held nothing to move (each
            logged)
        :raises InvalidUUID: a consumer uuid is not a uuid
        :raises ConsumerAllocationRetrievalFailed: reading a consumer failed
        :raises AllocationMoveFailed: a consumer generation conflict: the
            source or the target changed after it was read (a
            ``ConsumerGenerationConflict``; never retried, since what is to
            be moved may have changed)
        """
        utils.validate_uuid(source_consumer_uuid)
        utils.validate_uuid(target_consumer_uuid)
        try:
            return self._with_retries(
                'move_allocations', target_consumer_uuid,
                lambda: self._move_once(context, source_consumer_uuid,
                                        target_consumer_uuid),
                exc=_OutOfRetries)
        except _OutOfRetries as e:
            LOG.warning('Unable to move allocations from consumer '
                        '%(source)s to consumer %(target)s: %(error)s',
                        {'source': source_consumer_uuid,
                         'target': target_consumer_uuid,
                         'error': e.kwargs['error']})
            return False

    def _move_once(self, context, source_uuid, target_uuid):
        """One attempt of :meth:`move_allocations`, reads included.

        :raises ProviderGenerationConflict: to be retried
        """
        source = self.get_allocs_for_consumer(context, source_uuid)
        target = self.get_allocs_for_consumer(context, target_uuid)
        if target['allocations']:
            if not source['allocations']:
                LOG.info('Consumer %(source)s holds no allocations and '
                         'consumer %(target)s does: taking them to be '
                         'moved already',
                         {'source': source_uuid, 'target': target_uuid})
                return True
            LOG.debug('Replacing the allocations %(held)s of consumer '
                      '%(target)s with those of consumer %(source)s',
                      {'held': target['allocations'], 'target': target_uuid,
                       'source': source_uuid})
        if not source['allocations']:
            LOG.warning('Consumer %(source)s holds no allocations to move '
                        'to consumer %(target)s',
                        {'source': source_uuid, 'target': target_uuid})
            return False
        owner = {'project_id': source['project_id'],
                 'user_id': source['user_id']}
        payload = {
            source_uuid: dict(
                owner, allocations={},
                consumer_generation=source['consumer_generation']),
            target_uuid: dict(
                owner, allocations=source['allocations'],
                consumer_generation=target.get('consumer_generation')),
        }
        try:
            resp = self.post('/allocations', payload,
                             version=CONSUMER_GENERATION_VERSION,
                             global_request_id=context.global_id)
        except errors.TRANSPORT_ERRORS as e:
            return self._lost_move(context, source_uuid, target_uuid,
                                   source['allocations'],
                                   errors.describe_transport_error(e))
        if resp.status_code == 204:
            return True
        err = errors.error_from_response(resp)
        if errors.is_server_error(err):
            return self._lost_move(context, source_uuid, target_uuid,
                                   source['allocations'],
                                   errors.describe(err))
        if errors.is_consumer_generation_conflict(err):
            raise exception.AllocationMoveFailed(
                source_consumer=source_uuid, target_consumer=target_uuid,
                error=err.detail, placement_error=err)
        if errors.is_provider_generation_conflict(err):
            raise writes.ProviderGenerationConflict(err)
        LOG.warning('Unable to move allocations from consumer %(source)s '
                    'to consumer %(target)s: %(error)s',
                    {'source': source_uuid, 'target': target_uuid,
                     'error': errors.describe(err)})
        return False

    def _lost_move(self, context, source_uuid, target_uuid, moved, error):
        """After an unanswered move: True if it took effect, else False."""
        if self._move_landed(context, source_uuid, target_uuid, moved):
            return True
        LOG.warning('Unable to move allocations from consumer %(source)s '
                    'to consumer %(target)s: %(error)s',
                    {'source': source_uuid, 'target': target_uuid,
                     'error': error})
        return False

    def _move_landed(self, context, source_uuid, target_uuid, moved):
        """Read both consumers back: does placement hold the moved state?

        :param moved: the source's allocations as the move sent them
        :returns: True if the source holds nothing and the target holds
            exactly ``moved``'s resources; False otherwise, or if either
            consumer cannot be read
        """
        try:
            source = self.get_allocs_for_consumer(context, source_uuid)
            target = self.get_allocs_for_consumer(context, target_uuid)
        except exception.ConsumerAllocationRetrievalFailed as e:
            LOG.warning('Could not verify whether allocations moved from '
                        'consumer %(source)s to consumer %(target)s: '
                        '%(error)s', {'source': source_uuid,
                                      'target': target_uuid, 'error': e})
            return False
        wanted = {rp: a['resources'] for rp, a in moved.items()}
        held = {rp: a['resources']
                for rp, a in target['allocations'].items()}
        if source['allocations'] or held != wanted:
            return False
        LOG.warning('The reply from placement to moving allocations from '
                    'consumer %(source)s to consumer %(target)s was lost '
                    'but the move took effect',
                    {'source': source_uuid, 'target': target_uuid})
        return True

    # -- remove_provider_tree_from_instance_allocation

    def remove_provider_tree_from_instance_allocation(self, context,
                                                      consumer_uuid,
                                                      root_rp_uuid):
        """Drop a consumer's allocations on one provider tree, keep the rest.

        Reads the consumer and the providers of ``root_rp_uuid``'s tree,
        then PUTs (1.28, at the consumer generation read) the allocations
        against providers outside the tree (sharing providers included);
        an empty set if none remain, which frees the consumer. Nothing is
        written if the consumer holds nothing on the tree.

        * A generation conflict, the consumer's or a provider's, starts
          again from the reads (the consumer as it is now), up to
          ``[placement] claim_retry_attempts`` attempts.
        * A lost reply (a transport failure, a 5xx) counts as success if
          placement now holds exactly what was sent.

        :param context: the request context
        :param consumer_uuid: the consumer (instance or migration)
        :param root_rp_uuid: the root provider of the tree to leave
        :returns: True if the tree's allocations were removed or there were
            none; False if the consumer holds no allocations at all (logged
            as an error, as nova does), placement refused the PUT or did
            not answer, or the retries ran out (each logged)
        :raises InvalidUUID: a uuid parameter is not a uuid
        :raises ConsumerAllocationRetrievalFailed: reading the consumer
            failed
        :raises ResourceProviderRetrievalFailed: listing the tree failed
        """
        utils.validate_uuid(consumer_uuid)
        utils.validate_uuid(root_rp_uuid)
        try:
            return self._with_retries(
                'remove_provider_tree_from_instance_allocation',
                consumer_uuid,
                lambda: self._remove_tree_once(context, consumer_uuid,
                                               root_rp_uuid),
                exc=_OutOfRetries)
        except _OutOfRetries:
            # _with_retries has logged it.
            return False

    def _remove_tree_once(self, context, consumer_uuid, root_rp_uuid):
        """One attempt of removing a provider tree from a consumer.

        :raises ProviderGenerationConflict: to be retried
        """
        current = self.get_allocs_for_consumer(context, consumer_uuid)
        if not current['allocations']:
            LOG.error('Consumer %(consumer)s holds no allocations, so none '
                      'can be removed from the provider tree %(root)s',
                      {'consumer': consumer_uuid, 'root': root_rp_uuid})
            return False
        tree = {rp['uuid']
                for rp in self.get_providers_in_tree(context, root_rp_uuid)}
        kept = {rp: alloc for rp, alloc in current['allocations'].items()
                if rp not in tree}
        if len(kept) == len(current['allocations']):
            LOG.warning('Consumer %(consumer)s holds no allocations on the '
                        'provider tree %(root)s; nothing to remove',
                        {'consumer': consumer_uuid, 'root': root_rp_uuid})
            return True
        # The document as read, minus the tree: its consumer generation,
        # project and user go back unchanged.
        payload = dict(current, allocations=kept)
        try:
            self._put_allocations(context, consumer_uuid, payload)
        except exception.AllocationUpdateConflict as e:
            # The consumer changed since it was read; what to keep is
            # decided again from what it holds now.
            raise _Reread(e.kwargs['placement_error'])
        except exception.AllocationUpdateFailed as e:
            LOG.warning('Unable to remove the allocations of consumer '
                        '%(consumer)s on the provider tree %(root)s: '
                        '%(error)s', {'consumer': consumer_uuid,
                                      'root': root_rp_uuid,
                                      'error': e.kwargs['error']})
            return False
        return True
