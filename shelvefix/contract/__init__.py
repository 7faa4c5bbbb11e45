"""The placement contract suite: the double checked against real placement.

A *contract scenario* is a short script of HTTP requests against placement
(see :mod:`shelvefix.contract.scenarios`). The runner
(:mod:`shelvefix.contract.runner`) plays every scenario once against each
backend of :mod:`shelvefix.backends` - the in-memory double and
openstack-placement itself - through the same keystoneauth1 adapter,
records what placement answered (:mod:`shelvefix.contract.api`), makes the
two transcripts comparable (:mod:`shelvefix.contract.normalise`) and lists
every difference. :mod:`shelvefix.cmd.contract` is the command line.

The double is only trustworthy while the suite agrees: a difference is a
bug to fix in the double, never something to normalise away.
"""
