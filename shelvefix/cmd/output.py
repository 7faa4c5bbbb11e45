"""The command's output stream, and what happens when it cannot be written.

A full disk (``> /dev/full``), a closed terminal or a file system that
fails is the user's environment, not a bug: :class:`Output` turns the
``OSError`` a write raises into :class:`OutputError`, which the command
line reports in one line naming the stream and the reason. A reader that
went away (``| head``, ``BrokenPipeError``) is left as it is: that is an
ordinary end (exit 141, see :mod:`shelvefix.cmd.main`).

A text the stream's encoding cannot show (a non-ASCII path with
``PYTHONIOENCODING=ascii``, a file name that is not UTF-8) is written with
backslash escapes, as Python writes it on stderr (:func:`prepare`); where
the stream cannot be told to, it is reported like a failed write.
"""

import sys


class OutputError(Exception):
    """The command's output could not be written; the message says why."""


def name(stream):
    """How a message names ``stream``: stdout, stderr, or its file name."""
    if stream is sys.__stdout__ or stream is sys.stdout:
        return 'stdout'
    if stream is sys.__stderr__ or stream is sys.stderr:
        return 'stderr'
    named = getattr(stream, 'name', None)
    return named if isinstance(named, str) else 'the output'


def prepare(stream):
    """Write each line at once, escaping what the encoding lacks.

    Lines reach a pipe as they are written, not when the run ends (and a
    write that fails, fails at the line that caused it). A stream that
    cannot be reconfigured (a ``StringIO``) is left as it is.
    """
    reconfigure = getattr(stream, 'reconfigure', None)
    if reconfigure is None:
        return
    try:
        reconfigure(line_buffering=True, errors='backslashreplace')
    except (OSError, ValueError):
        pass


class Output(object):
    """``stream``, its failed writes raised as :class:`OutputError`.

    Everything else (``isatty``, ``fileno``...) is the stream's own.

    :param stream: a text stream (stdout, or what a test passes)
    """

    def __init__(self, stream):
        self.stream = stream

    def __getattr__(self, attr):
        return getattr(self.stream, attr)

    def _failed(self, exc):
        if isinstance(exc, UnicodeEncodeError):
            reason = ('its encoding (%s) cannot show %r'
                      % (exc.encoding, exc.object[exc.start:exc.end]))
        else:
            reason = exc.strerror or str(exc)
        return OutputError('cannot write to %s: %s'
                           % (name(self.stream), reason))

    def write(self, text):
        """Write ``text``; see the class."""
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            raise
        except (OSError, UnicodeEncodeError) as e:
            raise self._failed(e) from e

    def writelines(self, lines):
        """Write each of ``lines``."""
        for line in lines:
            self.write(line)

    def flush(self):
        """Flush the stream; see the class."""
        try:
            return self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise self._failed(e) from e
