"""``shelvefix stress``'s orderings, run on a placement, and their report.

:func:`run` runs each ordering asked for (:func:`shelvefix.race.stress.
run`) with what the placement it runs on offers: the database's counters
before and after, an :class:`~shelvefix.backends.observe.Observer` of its
tables to judge the cycles, a :class:`~shelvefix.backends.watch.Watch` of
its processes, and the ``--galera-fault`` of the run; then the report and
the verdict. What a run measured is printed before any error ends the
command.
"""

from shelvefix.cmd import common
from shelvefix import race


def run(args, placement, where, out, err, database=None):
    """Each ordering's stress run; then the report and the verdict.

    :param database: the :class:`~shelvefix.backends.server.
        PlacementServer` (or :class:`~shelvefix.backends.galera.
        GaleraPlacement`) placement runs on, or None. Its counters, read
        before and after each run, go in the report (``figures``); its
        observer judges the cycles and counts usages and ghosts; what
        befalls its processes from outside is watched and reported.

    A run stopped by an error still prints (and writes as ``--json``)
    what it measured before the error is raised on: the exit status is 2.
    """
    from shelvefix.race import stress
    from shelvefix.race import stress_report
    observer = database.observer() if database is not None else None
    watcher = None
    if database is not None:
        from shelvefix.backends import watch
        watcher = watch.start(database)
    results, figures, stopped = [], [], None
    try:
        _orderings(args, placement, err, database, observer, watcher,
                   results, figures)
    except Exception as e:
        stopped = e
    finally:
        if watcher is not None:
            watcher.stop()
        if observer is not None:
            observer.close()
    # The one decision: exit status, verdict line and JSON agree.
    verdict = stress.verdict(results)
    halt = None
    if stopped is not None:
        halt = _halt(stopped, watcher)
        verdict = verdict._replace(
            status=2, corrected_is_clean=False,
            reasons=verdict.reasons + ['the run stopped: %s' % halt])
    stress_report.emit(args, where, results, figures, verdict, out)
    if stopped is not None:
        if common.problem(stopped) is None:
            raise stopped
        raise common.CommandError(halt) from stopped
    return verdict.status


def _halt(error, watcher):
    """Why the run stopped, with what befell its processes: one line."""
    from shelvefix.backends import watch
    line = common.problem(error) or '%s: %s' % (type(error).__name__, error)
    line = common.one_line(line)
    if watcher is not None and watcher.noted:
        line += ' (meanwhile: %s)' % '; '.join(
            watch.describe(noted) for noted in watcher.noted)
    return line


def _orderings(args, placement, err, database, observer, watcher, results,
               figures):
    """Run each ordering, appending to ``results`` and ``figures``."""
    from shelvefix.backends import watch
    from shelvefix.race import stress
    from shelvefix.race import stress_report
    orderings = args.ordering or race.ORDERINGS
    for ordering in [o for o in race.ORDERINGS if o in orderings]:
        for free in args.free or [race.DELETE]:
            label = 'stress %s/%s' % (ordering, free)
            setting_up = common.Progress(
                err, label + ' set-up', total=args.servers,
                force=args.progress, unit='servers')
            progress = common.Progress(
                err, label, total=args.servers * args.cycles,
                force=args.progress, unit='cycles')
            before = database.counters() if database else {}
            requests = len(placement.calls)
            began = watcher.now() if watcher is not None else 0.0
            fault = _start_fault(args, database)
            try:
                results.append(stress.run(
                    placement, ordering, free, args.servers, args.cycles,
                    poll_interval=args.poll_interval,
                    latency=args.compute_latency / 1000.0, seed=args.seed,
                    progress=progress, setup_progress=setting_up,
                    observer=observer))
            except KeyboardInterrupt as e:
                setting_up.finish()
                progress.finish()
                _report_left(e, err)
                raise
            finally:
                if fault is not None:
                    fault.cancel.set()
            setting_up.finish()
            progress.finish()
            figures.append(stress_report.figures(
                results[-1], placement, requests, database, before, fault))
            if watcher is not None:
                figures[-1]['noticed'] = [
                    watch.describe(noted, began)
                    for noted in watcher.since(began)]
            # The run's request records are in its figures now: dropped,
            # so that memory holds one run's at most (see MAX_CYCLES).
            placement.reset_calls()


def _start_fault(args, database):
    """The fault of the run (``--galera-fault``), started; or None."""
    if not getattr(args, 'galera_fault', None):
        return None
    from shelvefix.backends import galera_faults
    return galera_faults.start(args.galera_fault, database)


def _report_left(interrupt, err):
    """Say what an interrupted run could not remove from placement.

    One line, before the command's "interrupted" line; nothing when the
    clean-up removed everything.
    """
    left = getattr(interrupt, 'cleanup_failure', None)
    if left is not None:
        err.write('shelvefix stress: interrupted, and %s\n'
                  % common.one_line(str(left)))
        err.flush()
