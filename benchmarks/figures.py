"""What the benchmarks share: a ratio is printed only when it was measured.

A ratio of times over no run, or over a zero, negative or non-finite
time, is not a figure: :func:`ratio` raises :class:`NoFigure` instead of
returning ``inf``, ``nan`` or a division error, and :func:`main` turns
that into one line on stderr and exit status 1, so that a benchmark whose
work vanished is never read as a result. :func:`count` refuses a number
of runs or requests below one on the command line (exit status 2).
"""

import argparse
import math
import os
import sys


class NoFigure(Exception):
    """A figure the measurements cannot give; the message says why."""


def ratio(numerator, denominator, what):
    """``numerator / denominator`` if both were measured.

    :param what: the figure's name, for the message
    :raises NoFigure: either is not a finite number, the denominator is
        not above zero, or the numerator is below zero
    """
    for value in (numerator, denominator):
        if (isinstance(value, bool) or
                not isinstance(value, (int, float)) or
                not math.isfinite(value)):
            raise NoFigure('%s: %r is not a measurement' % (what, value))
    if denominator <= 0:
        raise NoFigure('%s: the denominator is %r, nothing was measured'
                       % (what, denominator))
    if numerator < 0:
        raise NoFigure('%s: the numerator is %r' % (what, numerator))
    return numerator / denominator


def count(text):
    """An argparse ``type=``: a whole number of at least one."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError('%r is not a whole number' % text)
    if value < 1:
        raise argparse.ArgumentTypeError('%r: at least 1 is needed' % text)
    return value


def main(function, argv=None):
    """Run a benchmark's ``main``; a :class:`NoFigure` is one line, exit 1.

    :returns: the exit status
    """
    try:
        return function(argv)
    except NoFigure as e:
        sys.stderr.write('%s: no figure: %s\n' % (
            os.path.basename(function.__code__.co_filename), e))
        return 1
