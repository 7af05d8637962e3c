"""The batch settings of a dask cluster (pipelines/dask/local_cluster.py) and the commands of
docs/scale_out.md §4 that start one agree."""
from __future__ import annotations

import re
from pathlib import Path

from pipelines.dask.local_cluster import BATCH_SETTINGS, batch_environment, environment_variable

DOCS = Path(__file__).resolve().parents[3] / "docs" / "scale_out.md"


def test_environment_names_follow_dask():
    assert environment_variable("distributed.admin.system-monitor.interval") == \
        "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL"


def test_a_setting_the_user_made_is_kept():
    name = environment_variable("distributed.admin.tick.interval")
    env = batch_environment({name: "50ms", "PATH": "/bin"})
    assert env[name] == "50ms" and env["PATH"] == "/bin"
    assert env[environment_variable("distributed.worker.profile.enabled")] == "False"


def test_every_cluster_command_of_the_docs_exports_the_batch_settings():
    text = DOCS.read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    starting = [block for block in blocks if "dask scheduler" in block]
    assert len(starting) >= 2
    for block in starting:
        exported = dict(re.findall(r"(DASK_[A-Z_]+)=(\S+)", block))
        assert exported == {environment_variable(k): str(v) for k, v in BATCH_SETTINGS.items()}, block
