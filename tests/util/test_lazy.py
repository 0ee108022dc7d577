"""`lazy_exports`: a package's names load their submodule on first use, once, and only the named ones."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_a_lazy_name_loads_only_its_submodule_and_is_then_a_plain_attribute() -> None:
    code = (
        "import sys, pi_tui.checkpoints as c\n"
        "assert 'pi_tui.checkpoints.store' not in sys.modules\n"
        "value = c.BlobStore\n"
        "assert 'pi_tui.checkpoints.store' in sys.modules and 'pi_tui.checkpoints.rewind' not in sys.modules\n"
        "assert vars(c)['BlobStore'] is value\n"
        "from pi_tui.compaction import serialize_messages\n"  # an absolute module in the table
        "from pi_tui.agent.serialize import serialize_messages as direct\n"
        "assert serialize_messages is direct\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.stdout.strip() == "ok", result.stderr


def test_an_unknown_name_is_an_attribute_error_naming_the_package() -> None:
    import pi_tui.compaction

    with pytest.raises(AttributeError, match="'pi_tui.compaction' has no attribute 'no_such_name'"):
        _ = pi_tui.compaction.no_such_name
