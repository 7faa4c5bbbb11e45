"""The interleavings of bug 1798688, replayed as raw HTTP.

An instance holds allocations on ``src`` (consumer generation 1). Compute
frees them (GET + PUT empty, or DELETE) while the scheduler claims
``dst`` for the unshelve (GET, then PUT with the generation it read,
doubling up whatever it found). Each scenario is one order of those
requests, as the bug 1798688 write-up lists them.
"""

from shelvefix.contract import registry
from shelvefix.contract.scenarios import common

scenario = registry.scenario


class _Race(object):
    """The two actors' requests, each one callable in any order."""

    def __init__(self, api):
        self.api = api
        self.src = common.host(api, 'src')
        self.dst = common.host(api, 'dst')
        self.instance = api.uuid('instance')
        common.put(api, self.instance, {self.src: common.FLAVOR},
                   note='setup: the instance runs on src')
        self.scheduler_seen = None
        self.compute_generation = None

    def scheduler_get(self):
        response = common.get(self.api, self.instance,
                              note='scheduler GET')
        self.scheduler_seen = response.json()

    def scheduler_put(self):
        # claim_resources doubles up what it read and sends its generation.
        seen = self.scheduler_seen
        wanted = {rp: alloc['resources']
                  for rp, alloc in seen.get('allocations', {}).items()}
        wanted[self.dst] = common.FLAVOR
        return common.put(self.api, self.instance, wanted,
                          generation=seen.get('consumer_generation'),
                          note='scheduler PUT')

    def compute_get(self):
        response = common.get(self.api, self.instance, note='compute GET')
        self.compute_generation = common.generation_of(response)

    def compute_put_empty(self):
        return common.put(self.api, self.instance, {},
                          generation=self.compute_generation,
                          note='compute PUT empty')

    def compute_delete(self):
        return common.delete(self.api, self.instance, note='compute DELETE')

    def outcome(self):
        common.get(self.api, self.instance, note='outcome')
        common.usages(self.api, self.src)
        common.usages(self.api, self.dst)


@scenario('race_offload_then_claim_conflict',
          'scheduler GET, compute GET + PUT empty, scheduler PUT: 409 '
          'expected null but got 1')
def race_offload_then_claim(api):
    race = _Race(api)
    race.scheduler_get()
    race.compute_get()
    race.compute_put_empty()
    race.scheduler_put()
    race.outcome()


@scenario('race_claim_then_offload_wipes',
          'scheduler GET + PUT, then compute GET + PUT empty: 204 and the '
          'new claim is silently wiped')
def race_claim_then_offload(api):
    race = _Race(api)
    race.scheduler_get()
    race.scheduler_put()
    race.compute_get()
    race.compute_put_empty()
    race.outcome()


@scenario('race_compute_stale_generation',
          'compute GET, scheduler GET + PUT, compute PUT empty: 409 '
          'expected 2 but got 1')
def race_compute_stale(api):
    race = _Race(api)
    race.compute_get()
    race.scheduler_get()
    race.scheduler_put()
    race.compute_put_empty()
    race.outcome()


@scenario('race_delete_then_claim_conflict',
          'scheduler GET, compute DELETE, scheduler PUT: 409 expected null '
          'but got 1')
def race_delete_then_claim(api):
    race = _Race(api)
    race.scheduler_get()
    race.compute_delete()
    race.scheduler_put()
    race.outcome()


@scenario('race_claim_then_delete_wipes',
          'scheduler GET + PUT, then compute DELETE: 204 and the new claim '
          'is wiped')
def race_claim_then_delete(api):
    race = _Race(api)
    race.scheduler_get()
    race.scheduler_put()
    race.compute_delete()
    race.outcome()


@scenario('fixed_order_put_empty',
          'the fix: compute GET + PUT empty first, then the scheduler '
          'claims with null: 204')
def fixed_order_put_empty(api):
    race = _Race(api)
    race.compute_get()
    race.compute_put_empty()
    race.scheduler_get()
    race.scheduler_put()
    race.outcome()


@scenario('fixed_order_delete',
          'the fix with DELETE: compute DELETE first, then the scheduler '
          'claims with null: 204')
def fixed_order_delete(api):
    race = _Race(api)
    race.compute_delete()
    race.scheduler_get()
    race.scheduler_put()
    race.outcome()
