"""``shelvefix race``: every interleaving of a scenario, on real code.

``--scenario`` picks what runs (:mod:`shelvefix.race.scenarios`):
``offload-unshelve`` (the default: for each cell of ordering (corrected,
legacy) × the way compute frees allocations (GET + PUT empty, DELETE), the
compute manager's shelve-offload against the scheduler's claim),
``unshelve-periodic``, ``lifecycle``, the move scenarios
``resize-confirm``, ``resize-revert``, ``evacuate``, ``resize-delete``,
``resize-migrate``, ``live-migrate``, ``live-migrate-abort``, ``build``
and ``build-delete`` (nova's PCI cells of ``build`` on nova only),
``service-disable``, ``ironic-rebalance``, ``cross-cell-revert`` and
``cross-cell-confirm``, on nova only ``resize``, ``shelve-api``,
``evacuate-delete``, ``service-delete`` and ``live-migrate-group``, or
``all`` of them;
``--target`` whose code runs (:mod:`shelvefix.race.targets`: the
library's, or nova's through :mod:`shelvefix.nova`). The explorer runs
the actors through every interleaving of their shared-state steps
against a placement backend and counts outcomes. The exit status is 0
only if the corrected code shows no bad outcome, so the command can gate
CI."""

import json

from shelvefix import backends
from shelvefix.cmd import common
from shelvefix import race

HELP = ('explore every interleaving of shelve-offload and unshelve on the '
        'real code and count the outcomes (the main job)')
DESCRIPTION = (
    'Runs the library\'s real code (compute manager, resource tracker, '
    'conductor, scheduler and report client) in real threads, pausing '
    'each actor before every access to shared state, and explores every '
    'interleaving of those steps against a placement backend: one run per '
    'class of equivalent interleavings (optimal dynamic partial order '
    'reduction), or every interleaving with --no-reduce. It prints a table '
    'of outcomes per cell and the first counterexample of each bad '
    'outcome as a timeline.',
    None,  # the scenarios: scenarios_list(), from the table itself
    'Each scenario runs the corrected code and the code before each fix, '
    'derived by rewriting the corrected code. --target nova (or --nova '
    'PATH) runs them on nova\'s own code instead: "corrected" is then the '
    'nova as it is.',
    'Verdict: 0 if the corrected code shows no bad outcome in any '
    'interleaving explored (or, with --random, in any run), 1 if it shows '
    'one. A clean verdict needs evidence: every cell made at least one '
    'run, no run ended in an error no outcome names, and placement did not '
    'fail every run of a corrected cell; otherwise the status is 1 and a '
    'line says which cell fell short. When only pre-fix variants are '
    'chosen, no verdict on the corrected code is given and the status is '
    '0 (if their cells ran).',
)


def scenarios_list():
    """The scenarios --scenario accepts, each with its title.

    Made from :data:`shelvefix.race.scenarios.SCENARIOS`, the table the
    option's choices come from, so that the help lists every one.

    :returns: ``(heading, [(name, text), ...])``, a list paragraph of
        ``--help``
    """
    from shelvefix.race import scenarios
    items = []
    for scenario in scenarios.SCENARIOS.values():
        notes = []
        if scenario.name == race.DEFAULT_SCENARIO:
            notes.append('the default')
        if race.LIBRARY not in scenario.targets:
            notes.append('nova target only')
        items.append((scenario.name, ''.join(
            '[%s] ' % note for note in notes) + scenario.title))
    items.append((race.ALL, 'every scenario the target has'))
    return 'Scenarios (--scenario):', items


DESCRIPTION = tuple(scenarios_list if paragraph is None else paragraph
                    for paragraph in DESCRIPTION)


def add_arguments(parser):
    """Add the command's options to its subparser."""
    parser.add_argument(
        '--scenario', choices=race.SCENARIOS + (race.ALL,),
        metavar='SCENARIO',
        default=race.DEFAULT_SCENARIO,
        help='what to explore (default offload-unshelve; see above)')
    parser.add_argument(
        '--target', choices=race.TARGETS,
        help='whose code the actors run: library (shelvefix\'s own, in '
             'nova\'s corrected order; the default) or nova (nova\'s own '
             'compute manager, resource tracker, conductor, scheduler and '
             'report client: the installed nova, or the one --nova names)')
    parser.add_argument(
        '--nova', metavar='PATH',
        help='the nova to explore (implies --target nova): a source tree '
             'or an unpacked sdist (a directory holding nova/__init__.py) '
             'or a wheel, imported from there, not installed')
    parser.add_argument(
        '--backend', choices=backends.NAMES,
        help='placement to run against (default: real, the embedded '
             'openstack-placement, on the library; double on nova, whose '
             'runs take several times longer; remote needs --config-file)')
    common.add_config_file_argument(parser)
    parser.add_argument(
        '--variant', '--ordering', choices=race.VARIANTS, action='append',
        metavar='VARIANT',
        help='only the cells of this code variant, one of %s: corrected, '
             'the code before a fix (legacy: bug 1798688; pre-N: bug N), '
             'or a part as nova still has it (nova-*); repeatable (default: '
             'every variant of the scenario). --ordering is the same option, '
             'under the name the offload-unshelve table uses'
             % ', '.join(race.VARIANTS))
    common.add_free_argument(parser, 'both')
    parser.add_argument(
        '--ghost', action='store_true',
        help='also explore freeing with a DELETE that placement commits '
             'only partly: the allocations go, the consumer record stays '
             '(a ghost consumer) and placement answers 500; not with '
             '--backend remote')
    parser.add_argument(
        '--without', action='append', metavar='ACTOR',
        help='leave this actor of the scenario out (the nova target\'s '
             'scenarios that can, e.g. an audit: periodic-1); repeatable')
    parser.add_argument(
        '--no-reduce', action='store_true',
        help='explore every interleaving, not one per class of equivalent '
             'interleavings (see "How the explorer works" in the guide)')
    parser.add_argument(
        '--workers', type=int, metavar='N',
        help='processes that explore at once (default: one per CPU with '
             '--backend double, else 1; more than 1 needs --backend '
             'double, whose state each forked worker copies)')
    common.add_cluster_argument(parser)
    parser.add_argument(
        '--random', type=int, metavar='N',
        help='instead of exploring, make N uncontrolled runs per cell with '
             'real threads and real timing')
    parser.add_argument('--seed', type=int,
                        help='seed of the actors\' start delays in --random '
                             'runs (default 0)')
    parser.add_argument(
        '--diagram', metavar='FILE.md',
        help='write the first counterexample of each bad outcome as a '
             'Mermaid sequence diagram to this Markdown file')
    common.add_json_argument(parser)
    common.add_progress_argument(parser)


def _scenarios(args):
    from shelvefix.race import scenarios
    names = (race.SCENARIOS if args.scenario == race.ALL
             else (args.scenario,))
    return [scenarios.get_scenario(name) for name in names]


def _all_cells(args, scenario):
    """The scenario's cells on the chosen target."""
    if args.target == race.NOVA:
        from shelvefix.nova import lab
        return lab.NovaLab.cells(scenario)
    from shelvefix.race import targets
    return targets.LibraryLab.cells(scenario, ghost=args.ghost)


def _cells(args, scenario):
    variants = args.variant or race.VARIANTS
    frees = args.free or race.FREE_METHODS
    return [cell for cell in _all_cells(args, scenario)
            if cell.variant in variants and
            (cell.free is None or cell.free in frees)]


def _check_target(args):
    """``--target`` and ``--nova``: what the nova target can run."""
    if args.nova is not None:
        if args.target == race.LIBRARY:
            raise common.CommandError('--nova names a nova to explore: it '
                                      'needs --target nova, not library')
        args.target = race.NOVA
    args.target = args.target or race.LIBRARY
    if args.target != race.NOVA:
        args.backend = args.backend or backends.REAL
        return
    args.backend = args.backend or backends.DOUBLE
    if args.backend not in (backends.DOUBLE, backends.REAL):
        raise common.CommandError(
            '--target nova runs nova\'s code on --backend double or real, '
            'made in nova\'s own process, not on %s' % args.backend)
    for option, given in (('--ghost', args.ghost), ('--free', args.free)):
        if given:
            raise common.CommandError(
                '%s applies to the library target only: nova frees '
                'allocations its own way' % option)
    from shelvefix.backends import real
    if args.backend == backends.REAL and not real.available():
        raise common.CommandError(real.INSTALL_HINT)


def _check_random(args):
    """Refuse what ``--random`` (or its absence) makes meaningless."""
    if args.random is None:
        if args.seed is not None:
            raise common.CommandError('--seed applies to --random runs '
                                      'only; add --random N')
        return
    if args.random < 1:
        raise common.CommandError('--random needs a positive number of runs')
    for option, given in (('--no-reduce', args.no_reduce),
                          ('--diagram', args.diagram),
                          ('--workers', args.workers is not None),
                          ('--cluster', args.cluster != 'local')):
        if given:
            raise common.CommandError(
                '%s applies to an exploration, not to --random runs'
                % option)
    args.seed = args.seed or 0


def _check_without(args):
    """``--without``: actors of the one scenario chosen, on nova."""
    if not args.without:
        return
    if args.target != race.NOVA:
        raise common.CommandError(
            '--without applies to the nova target only: the library\'s '
            'scenarios run every one of their actors')
    if args.scenario == race.ALL:
        raise common.CommandError('--without names actors of one '
                                  'scenario, not of --scenario all')
    if args.random:
        raise common.CommandError('--without applies to an exploration, '
                                  'not to --random runs')
    actors = _scenarios(args)[0].actor_names
    for actor in args.without:
        if actor not in actors:
            raise common.CommandError(
                '--without %s: --scenario %s has no such actor (it has: '
                '%s)' % (actor, args.scenario, ', '.join(actors)))


def _check_variants(args):
    """Every ``--variant`` given must be one of a chosen scenario's."""
    known = set(cell.variant for scenario in _scenarios(args)
                for cell in _all_cells(args, scenario))
    for variant in args.variant or ():
        if variant not in known:
            raise common.CommandError(
                '--variant %s is not a variant of --scenario %s%s (it has: '
                '%s)' % (variant, args.scenario,
                         ' on nova' if args.target == race.NOVA else '',
                         ', '.join(v for v in race.VARIANTS if v in known)))


def run(args, out, err):
    """Run the command; returns the exit status.

    :raises CommandError: for what the user can fix
    """
    _check_random(args)
    _check_target(args)
    if args.diagram:
        common.check_writable(args.diagram)
    common.check_cluster(args)
    common.check_workers(args)
    _check_variants(args)
    _check_without(args)
    if args.ghost and args.backend == backends.REMOTE:
        raise common.CommandError('--ghost needs a placement this process '
                                  'can fail inside: the double or real')
    if args.scenario not in (race.OFFLOAD_UNSHELVE, race.ALL):
        for option, given in (('--ghost', args.ghost),
                              ('--free', args.free)):
            if given:
                raise common.CommandError(
                    '%s applies to the offload-unshelve scenario only, not '
                    'to --scenario %s' % (option, args.scenario))
    for scenario in _scenarios(args):
        if args.target not in scenario.targets and args.scenario != race.ALL:
            raise common.CommandError(
                '--scenario %s runs on the %s target only'
                % (scenario.name, ' and '.join(scenario.targets)))
    if not any(_cells(args, scenario) for scenario in _scenarios(args)):
        raise common.CommandError(
            'no cell of --scenario %s matches the --variant/--ordering and '
            '--free given' % args.scenario)
    run_lab = _run_random if args.random else _run_explore
    if args.cluster.engine:
        from shelvefix.cmd import race_cluster
        return race_cluster.run_on_cluster(args, out, err, _run_explore)
    if args.target == race.NOVA:
        from shelvefix import nova
        from shelvefix.nova import lab as nova_lab
        try:
            with nova_lab.NovaLab(args.nova, args.backend) as lab:
                return run_lab(args, lab, out, err)
        except nova.NovaUnusable as e:
            raise common.CommandError(str(e)) from None
    from shelvefix.race import targets
    placement = common.make_backend(args.backend, args.config_file)
    with placement:
        return run_lab(args, targets.LibraryLab(placement), out, err)


def _on(args, lab):
    """What the runs ran on: the backend, and nova's code if so."""
    text = backends.DESCRIPTIONS[args.backend]
    if args.target == race.NOVA:
        text += "\nwith nova's code: %s" % lab.description
    return text


def _run_explore(args, lab, out, err):
    from shelvefix.race import report
    done = []
    if getattr(lab, 'concurrent', False):
        from shelvefix.cmd import race_cluster
        explore = race_cluster.explorations(
            args, lab, err, [(scenario, cell) for scenario in _scenarios(args)
                             for cell in _cells(args, scenario)])
    else:
        def explore(scenario, cell, progress):
            options = dict(without=args.without) if args.without else {}
            return lab.explore(scenario, cell, reduce=not args.no_reduce,
                               progress=progress, workers=args.workers,
                               **options)
    for scenario in _scenarios(args):
        if not _cells(args, scenario):
            continue
        if not args.json:
            # The heading now, so that a reader sees what is running.
            out.write('%sshelvefix race: %s%s\non %s\n\n' % (
                '\n' if done else '', scenario.title,
                ' (without %s)' % ', '.join(args.without)
                if args.without else '', _on(args, lab)))
        results = []
        for cell in _cells(args, scenario):
            progress = common.Progress(
                err, common.cell_label(scenario, cell), force=args.progress)
            results.append(explore(scenario, cell, progress))
            progress.finish()
        done.append((scenario, results))
        if not args.json:
            _print_exploration(args, scenario, results, out)
    if args.diagram:
        with open(args.diagram, 'w') as f:
            f.write(''.join(
                report.diagrams(results, scenario.actor_names,
                                heading='# shelvefix race --scenario %s: '
                                        'first counterexamples'
                                        % scenario.name)
                for scenario, results in done))
    clean = all(report.corrected_is_clean(results)
                for _scenario, results in done)
    why = report.unearned_scenarios(done)
    if args.json:
        data = [dict(scenario=scenario.name,
                     cells=report.to_json(results),
                     corrected_is_clean=report.corrected_is_clean(results),
                     unearned=report.unearned(results))
                for scenario, results in done]
        _write_json(out, data, lab, backend=args.backend,
                    reduced=not args.no_reduce, corrected_is_clean=clean,
                    workers=args.workers, without=args.without or [],
                    cluster=args.cluster.text)
        if why:
            err.write('shelvefix race: no verdict: %s\n' % why)
    elif args.diagram:
        out.write('Diagrams written to %s\n' % args.diagram)
    return 0 if clean and not why else 1


def _write_json(out, data, lab, **document):
    """Write the JSON document: one scenario's fields inline, or a list."""
    document['target'] = lab.description
    if len(data) == 1:
        document.update(data[0])
    else:
        document['scenarios'] = data
    json.dump(document, out, indent=2, sort_keys=True)
    out.write('\n')


def _print_exploration(args, scenario, results, out):
    from shelvefix.race import report
    corrected = ("nova's code as it is" if args.target == race.NOVA
                 else None)
    out.write(report.exploration_text(scenario, results, args.no_reduce,
                                      corrected))


def _run_random(args, lab, out, err):
    from shelvefix.cmd import race_random
    return race_random.run_random(
        args, lab, out, err, _scenarios(args),
        lambda scenario: _cells(args, scenario), _on(args, lab), _write_json)
