"""Two corpus rows on a real Dask cluster, against one process.

A scheduler and two worker processes on 127.0.0.1
(:class:`shelvefix.cluster.fixture.DaskProcesses`); each worker makes its
own patched copy of the installed nova for a row and its own runner
process (:mod:`shelvefix.cluster.tasks`). The self-test on the cluster
must come to what it comes to in this process, run for run: each row's
patched exploration and each whole exploration the same runs, in the
same order, with the same outcomes.
"""

import testtools

from shelvefix import cluster
from shelvefix.cluster import engine
from shelvefix.cluster import fixture
from shelvefix.cluster import lab as cluster_lab
from shelvefix import corpus
from shelvefix.corpus import runs
from shelvefix import race

#: One row of a concurrency race, one of a failure path.
BUGS = ('1798688', '1862633')


class CorpusOnClusterTestCase(testtools.TestCase):

    def test_two_rows_run_for_run(self):
        rows = corpus.select(corpus.load(), bugs=BUGS)
        self.assertEqual(len(BUGS), len(rows))
        description, alone = runs.self_test(rows)
        dask = self.useFixture(fixture.DaskProcesses(workers=2))
        with engine.Engine(cluster.parse(dask.address)) as cluster_engine:
            with cluster_lab.ClusterLab(cluster_engine, race.NOVA,
                                        'double') as lab:
                described, together = runs.self_test(rows, lab=lab)
                # Two patched rows, two whole explorations.
                self.assertEqual(4, lab.figures.tasks)
        self.assertEqual(description, described)
        self.assertTrue(runs.proven(together))
        for one, other in zip(alone, together):
            self.assertEqual(one.row, other.row)
            self.assertEqual(runs.REPRODUCED, other.status)
            for mine, theirs in ((one.patched, other.patched),
                                 (one.explored, other.explored)):
                self.assertEqual((mine.runs, mine.counts, mine.digest),
                                 (theirs.runs, theirs.counts, theirs.digest))
