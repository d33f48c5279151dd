"""What runs after a collection: the ``gpu_tracker.hooks`` entry-point group.

One mechanism for the project's own follow-ups and for third-party packages alike
(the way datasette registers its default plugins with the same hooks as everyone
else's): a distribution declares an entry point in the group, naming a *plugin*,
any object (usually a module) that defines one or more hook functions::

    [project.entry-points."gpu_tracker.hooks"]
    slack-digest = "my_package.gpu_hooks"

    # my_package/gpu_hooks.py
    order = 50                       # optional: lower runs first (default 100)

    def after_collection(engine, settings, runs, origin): ...
    def job_health_changed(change): ...

The hooks, and the arguments a hook function may ask for *by name* (it takes any
subset, so adding an argument later breaks no plugin):

``after_collection(engine, settings, runs, origin)``
    after runs committed: ``runs`` is the tuple of committed
    :class:`~tracker.collect.RunSummary` (status ``succeeded``) of one scheduled
    job (``origin="serve"``) or of one ``gpu-tracker collect`` / ``import`` command
    (``origin="collect"``/``"import"``; ``--no-hooks`` skips them). ``engine`` is
    the store handle (query it through ``tracker.store``).
``job_health_changed(engine, settings, change)``
    when a scheduled job turns stale (no success for ``stale_after_cadences``
    cadences) or recovers: ``change`` is a :class:`JobHealthChange`. This is where
    a "collector down" alert plugs in.

Plugins run in ``order``, then by entry-point name; the built-in rankings
recompute (``tracker.hooks.rankings``) has order 10, so a plugin reading rankings
(alerts) uses a larger one. A plugin that fails to load, or a hook that raises, is
logged with the plugin's name and skipped: it never stops the service, the
command, or the other plugins. Hooks run one at a time per process.
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tracker.collect import RunSummary
    from tracker.settings import Settings
    from tracker.store import Engine

__all__ = [
    "DEFAULT_ORDER",
    "GROUP",
    "HOOK_ARGUMENTS",
    "HookError",
    "Hooks",
    "JobHealthChange",
    "Origin",
    "Plugin",
    "load_hooks",
    "plugin_of",
]

log = logging.getLogger(__name__)

GROUP = "gpu_tracker.hooks"
DEFAULT_ORDER = 100

HOOK_ARGUMENTS: Mapping[str, frozenset[str]] = {
    "after_collection": frozenset({"engine", "settings", "runs", "origin"}),
    "job_health_changed": frozenset({"engine", "settings", "change"}),
}
"""Each hook's name and the arguments its functions may ask for."""


class HookError(Exception):
    """A plugin that cannot be used as declared (the message names it and why)."""


class Origin(StrEnum):
    """What committed the runs an ``after_collection`` hook is told about."""

    SERVE = "serve"
    COLLECT = "collect"
    IMPORT = "import"


@dataclass(frozen=True)
class JobHealthChange:
    """A scheduled job turned stale (``stale=True``) or recovered (``stale=False``)."""

    job_id: str
    """``<collector>:<scope>``, as in /healthz and the metrics."""
    collector: str
    scope: str
    stale: bool
    last_success: datetime | None
    """When the job last finished a successful run (None: never, as far as known)."""
    at: datetime


@dataclass(frozen=True)
class Plugin:
    """One loaded plugin: its hook functions and the arguments each asks for."""

    name: str
    order: int
    functions: Mapping[str, tuple[Callable[..., object], tuple[str, ...]]]


def _wanted(plugin: str, hook: str, function: Callable[..., object]) -> tuple[str, ...]:
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError) as exc:
        raise HookError(f"hook plugin {plugin}: {hook} has no readable signature") from exc
    names = []
    allowed = HOOK_ARGUMENTS[hook]
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.kind is p.POSITIONAL_ONLY or p.name not in allowed:
            if p.default is not p.empty:
                continue
            raise HookError(
                f"hook plugin {plugin}: {hook}() asks for {p.name!r}; "
                f"it may ask for {', '.join(sorted(allowed))} (by name)"
            )
        names.append(p.name)
    return tuple(names)


def plugin_of(name: str, obj: object) -> Plugin:
    """Check ``obj`` as the plugin ``name``: a :class:`HookError` says what is wrong."""
    functions = {}
    for hook in HOOK_ARGUMENTS:
        function = getattr(obj, hook, None)
        if function is None:
            continue
        if not callable(function):
            raise HookError(f"hook plugin {name}: {hook} is not callable")
        functions[hook] = (function, _wanted(name, hook, function))
    if not functions:
        raise HookError(
            f"hook plugin {name}: defines none of the hooks ({', '.join(HOOK_ARGUMENTS)})"
        )
    order = getattr(obj, "order", DEFAULT_ORDER)
    if not isinstance(order, int) or isinstance(order, bool):
        raise HookError(f"hook plugin {name}: order must be an integer, got {order!r}")
    return Plugin(name, order, functions)


@dataclass
class Hooks:
    """The loaded plugins, in the order they run."""

    plugins: Sequence[Plugin] = ()
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.plugins = sorted(self.plugins, key=lambda p: (p.order, p.name))

    @classmethod
    def of(cls, objects: Mapping[str, object]) -> Hooks:
        """Hooks from objects given by name (tests, embedding); errors raise."""
        return cls([plugin_of(name, obj) for name, obj in objects.items()])

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.plugins]

    def after_collection(
        self,
        engine: Engine,
        settings: Settings,
        runs: Iterable[RunSummary],
        origin: Origin,
        *,
        context: str,
    ) -> list[str]:
        """Every ``after_collection`` hook; returns the names of those that raised.

        ``context`` names what ran (``the aws:spot run``), for the log line of a
        hook that fails.
        """
        committed = tuple(runs)
        if not committed:
            return []
        arguments = {"engine": engine, "settings": settings, "runs": committed, "origin": origin}
        return self._call("after_collection", arguments, context)

    def job_health_changed(
        self, engine: Engine, settings: Settings, change: JobHealthChange
    ) -> list[str]:
        """Every ``job_health_changed`` hook; returns the names of those that raised."""
        arguments = {"engine": engine, "settings": settings, "change": change}
        state = "stale" if change.stale else "fresh again"
        return self._call("job_health_changed", arguments, f"{change.job_id} turned {state}")

    def _call(self, hook: str, arguments: Mapping[str, Any], context: str) -> list[str]:
        failed = []
        with self._lock:  # e.g. one rankings recompute at a time per process
            for plugin in self.plugins:
                entry = plugin.functions.get(hook)
                if entry is None:
                    continue
                function, wanted = entry
                try:
                    function(**{name: arguments[name] for name in wanted})
                except Exception:
                    failed.append(plugin.name)
                    log.exception(
                        "hook %s (%s) failed after %s",
                        plugin.name,
                        hook,
                        context,
                        extra={"event": "hook_failed", "hook": plugin.name, "hook_name": hook},
                    )
        return failed


def load_hooks(group: str = GROUP) -> Hooks:
    """The plugins declared in ``group`` by installed distributions.

    A plugin that fails to import or is malformed is logged (with its name and
    entry point) and left out; the others load.
    """
    plugins = []
    seen: set[str] = set()
    for ep in entry_points(group=group):
        if ep.name in seen:
            log.warning("hook plugin %s declared twice; using the first (%s)", ep.name, ep.value)
            continue
        seen.add(ep.name)
        try:
            plugins.append(plugin_of(ep.name, ep.load()))
        except HookError as exc:
            log.error("%s", exc, extra={"event": "hook_unusable", "hook": ep.name})
        except Exception as exc:
            log.error(
                "hook plugin %s (%s) failed to load: %s",
                ep.name,
                ep.value,
                exc,
                extra={"event": "hook_unusable", "hook": ep.name},
            )
    return Hooks(plugins)
