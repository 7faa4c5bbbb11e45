"""``shelvefix race --cluster``: the cells as tasks of a Dask cluster.

With ``--cluster local:N`` or ``--cluster tcp://HOST:PORT``, the command
starts or reaches the cluster (:class:`shelvefix.cluster.engine.Engine`),
explores every cell of every scenario chosen at once, each a task
(:class:`shelvefix.cluster.lab.ClusterLab`), and reports them as it does
without a cluster: the same table, run for run.
"""

from shelvefix.cmd import common


def run_on_cluster(args, out, err, run_explore):
    """Run ``run_explore(args, lab, out, err)`` on the cluster named.

    :raises CommandError: the cluster cannot be reached or lost a task,
        or the nova named cannot be driven
    """
    from shelvefix.cluster import engine
    from shelvefix.cluster import lab as cluster_lab
    from shelvefix import nova
    try:
        with engine.Engine(args.cluster) as cluster:
            with cluster_lab.ClusterLab(
                    cluster, args.target, args.backend, args.nova,
                    args.config_file) as lab:
                return run_explore(args, lab, out, err)
    except (engine.EngineError, nova.NovaUnusable) as e:
        raise common.CommandError(str(e)) from None


def explorations(args, lab, err, cells):
    """Explore every ``(scenario, cell)`` as a task, at once.

    :returns: ``explore(scenario, cell, progress)`` handing out the
        results in the order of ``cells``
    """
    meter = common.Progress(err, 'shelvefix race on %s' % args.cluster.text,
                            total=len(cells), force=args.progress,
                            unit='tasks')

    def progress(done, total, in_flight):
        meter.label = ('shelvefix race on %s, %d in flight'
                       % (args.cluster.text, in_flight))
        meter(done)
    from shelvefix.cluster import lab as cluster_lab
    results = iter(lab.explore_many(
        [cluster_lab.Request(scenario, cell, without=args.without or ())
         for scenario, cell in cells],
        reduce=not args.no_reduce, progress=progress))
    meter.finish()
    return lambda scenario, cell, progress: next(results)
