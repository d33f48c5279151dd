"""Listing the collectors must not import Tencent's SDK: every CLI command lists them
(the registry imports each collector module), and the SDK adds about 0.4 s."""

from __future__ import annotations

import subprocess
import sys

_SDK_LOADED = "any(m == 'tencentcloud' or m.startswith('tencentcloud.') for m in sys.modules)"


def _loads_the_sdk(statement: str) -> bool:
    code = f"import sys\n{statement}\nprint({_SDK_LOADED})"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip() == "True"


def test_importing_the_collector_module_does_not_import_the_sdk() -> None:
    assert not _loads_the_sdk("import collectors.tencent")


def test_listing_every_collector_does_not_import_the_sdk() -> None:
    statement = (
        "from tracker.registry import available\n"
        "found = available()\n"
        "assert 'tencent' in found, sorted(found)"
    )
    assert not _loads_the_sdk(statement)


def test_the_check_sees_the_sdk_when_it_is_imported() -> None:
    """The probe itself can fail: importing the SDK module is detected."""
    assert _loads_the_sdk("import collectors.tencent_sdk")
