"""Runs ``gpu-tracker ARGS`` inside the test process, as a subprocess would see it.

A subprocess per CLI call re-imported every cloud SDK (1-3 s each on the CI
machine) and dominated the suite's time. The console script is ``tracker.cli:main``;
calling it here with the same argv, environment (``$PYTHONPATH`` entries go first on
``sys.path``), working directory and fresh stdout/stderr gives the same output and
exit code. What only a real process shows (the installed script, a pseudo-terminal,
signals, two processes at once) keeps a subprocess: ``cli_runner(..., process=True)``
or the test's own ``subprocess`` call.

Process-wide state the CLI changes is put back after each call: the environment,
the working directory, ``sys.path``, the root logger's handlers and every logger's
level, the SIGTERM/SIGINT handlers, and the warning filters (a subprocess starts
with Python's defaults, under which pytest's ``error::SAWarning`` does not apply:
the warning goes to stderr).
"""

from __future__ import annotations

import io
import logging
import os
import signal
import subprocess
import sys
import traceback
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

__all__ = ["run_in_process"]

# Python's filters at start-up without -W (see the warnings module docs), innermost last.
_DEFAULT_FILTERS: tuple[tuple[str, type[Warning], str], ...] = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, ""),
    ("ignore", PendingDeprecationWarning, ""),
    ("ignore", ImportWarning, ""),
    ("ignore", ResourceWarning, ""),
)


@contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextmanager
def _cwd_and_path(cwd: Path, pythonpath: str) -> Iterator[None]:
    saved_cwd, saved_path = os.getcwd(), list(sys.path)
    os.chdir(cwd)
    # $PYTHONPATH entries come first on a new interpreter's sys.path.
    sys.path[:0] = [p for p in pythonpath.split(os.pathsep) if p]
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        sys.path[:] = saved_path


@contextmanager
def _logging_restored() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {
        name: lg.level
        for name, lg in logging.root.manager.loggerDict.items()
        if isinstance(lg, logging.Logger)
    }
    try:
        yield
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(level)
        for name, lg in logging.root.manager.loggerDict.items():
            if isinstance(lg, logging.Logger):
                lg.setLevel(levels.get(name, logging.NOTSET))


@contextmanager
def _signals_restored() -> Iterator[None]:
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


@contextmanager
def _subprocess_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.resetwarnings()
        for action, category, module in reversed(_DEFAULT_FILTERS):
            warnings.filterwarnings(action, category=category, module=module)  # type: ignore[arg-type]
        yield


def _stream() -> io.TextIOWrapper:
    # A pipe's text stream: UTF-8, not a terminal (so no colour, no progress bar).
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    raw = stream.buffer.getvalue()  # type: ignore[attr-defined]
    # subprocess.run(text=True) decodes with universal newlines.
    return str(raw.decode("utf-8")).replace("\r\n", "\n").replace("\r", "\n")


def _exit_code(exc: SystemExit, stderr: io.TextIOWrapper) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=stderr)  # what the interpreter does with sys.exit("text")
    return 1


def run_in_process(
    args: Sequence[str], *, env: Mapping[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """``gpu-tracker *args`` through ``tracker.cli.main`` with ``env`` as the whole
    environment and ``cwd`` as the working directory."""
    from tracker.cli import main

    out, err = _stream(), _stream()
    saved_streams = sys.stdout, sys.stderr
    code = 0
    with (
        _environment(env),
        _cwd_and_path(cwd, env.get("PYTHONPATH", "")),
        _logging_restored(),
        _signals_restored(),
        _subprocess_warnings(),
    ):
        sys.stdout, sys.stderr = out, err
        try:
            main(list(args))
        except SystemExit as exc:
            code = _exit_code(exc, err)
        except Exception:  # uncaught: the interpreter prints the traceback and exits 1
            err.write(traceback.format_exc())
            code = 1
        finally:
            sys.stdout, sys.stderr = saved_streams
    return subprocess.CompletedProcess(
        ["gpu-tracker", *args], code, stdout=_text(out), stderr=_text(err)
    )
