"""A third-party hook plugin, as a package outside this project would ship it.

``gpu_tracker_test_hooks-1.0.dist-info/entry_points.txt`` declares it in the
``gpu_tracker.hooks`` group; putting this folder on ``sys.path``/``PYTHONPATH``
"installs" it (``importlib.metadata`` finds the dist-info there), in-process and
in a CLI subprocess alike. Each call is appended as one JSON line to the file
named by ``GPU_TRACKER_TEST_HOOKS_LOG``.
"""

from __future__ import annotations

import json
import os
from typing import Any

order = 50


def _write(record: dict[str, Any]) -> None:
    with open(os.environ["GPU_TRACKER_TEST_HOOKS_LOG"], "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")


def after_collection(runs: Any, origin: str) -> None:
    _write(
        {
            "hook": "after_collection",
            "origin": str(origin),
            "runs": [[r.provider, str(r.status), r.run_id] for r in runs],
        }
    )


def job_health_changed(change: Any) -> None:
    _write({"hook": "job_health_changed", "job": change.job_id, "stale": change.stale})
