"""``shelvefix race --random N``: uncontrolled runs, reported as explored.

The cells' runs are made with real threads and real timing
(:meth:`~shelvefix.race.targets.LibraryLab.random`, or the nova target's),
then tabled and judged by the rule of evidence an exploration has
(:func:`shelvefix.race.report.unearned_scenarios`).
"""

from shelvefix.cmd import common
from shelvefix import race


def run_random(args, lab, out, err, scenarios, cells, on, write_json):
    """Make ``args.random`` runs of each chosen cell; the exit status.

    :param scenarios: the chosen scenarios
    :param cells: ``cells(scenario)``: a scenario's chosen cells
    :param on: what the runs ran on, as the heading says it
    :param write_json: writes the JSON document
    """
    from shelvefix.race import outcomes
    from shelvefix.race import report
    done = []
    index = 0
    for scenario in scenarios:
        results = []
        for cell in cells(scenario):
            progress = common.Progress(
                err, common.cell_label(scenario, cell), total=args.random,
                force=args.progress, unit='runs')
            results.append(lab.random(scenario, cell, args.random,
                                      seed=args.seed + index,
                                      progress=progress))
            progress.finish()
            index += 1
        if results:
            done.append((scenario, results))
    # As explored cells, for the table and for the one rule of evidence.
    summaries = [(scenario, [report.CellResult(r.cell, r.runs, r.counts, {},
                                               r.elapsed, 0, True)
                             for r in results])
                 for scenario, results in done]
    why = report.unearned_scenarios(summaries)
    if args.json:
        data = [{'scenario': scenario.name,
                 'cells': [{'variant': r.cell.variant,
                            'ordering': r.cell.variant,
                            'free': r.cell.free, 'fault': r.cell.fault,
                            'runs': r.runs,
                            'outcomes': r.counts,
                            'elapsed_s': round(r.elapsed, 3)}
                           for r in results]}
                for scenario, results in done]
        write_json(out, data, lab, backend=args.backend,
                   random=args.random, seed=args.seed, unearned=why)
        if why:
            err.write('shelvefix race: no verdict: %s\n' % why)
    else:
        out.write('shelvefix race --random %d --seed %d: uncontrolled runs '
                  'with real threads\non %s\n\n'
                  % (args.random, args.seed, on))
        for scenario, cells in summaries:
            if len(done) > 1 or scenario.name != race.DEFAULT_SCENARIO:
                out.write('%s:\n' % scenario.title)
            out.write(report.table(cells, first_column='runs',
                                   variant_column=scenario.first_column,
                                   always=scenario.symptoms) +
                      '\n\n')
        out.write('%d runs in %.1f s. The seed fixes the start delays of the '
                  'actors in each run; the\noperating system schedules the '
                  'threads, so counts vary from one run of this\ncommand to '
                  'the next, with the same seed too.\n'
                  % (sum(r.runs for _s, rs in done for r in rs),
                     sum(r.elapsed for _s, rs in done for r in rs)))
        if why:
            out.write('No verdict, the runs do not show it: %s\n' % why)
    bad = any(set(r.counts) - {outcomes.OK}
              for _scenario, results in done for r in results
              if r.cell.variant == race.CORRECTED)
    return 1 if bad or why else 0
