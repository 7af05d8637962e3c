"""Before wiki_mrc starts on DirectRunner: will its peak memory fit the machine?

DirectRunner keeps every shuffle in memory, so its peak grows with the dump (docs/scale_out.md,
"How much memory DirectRunner needs"). The peak is predicted from the dumps' sizes with the measured
line (base + slope x MB of XML; a .bz2 file's XML estimated at XML_PER_BZ2_BYTE times its size, the
largest ratio of the real excerpts, so that the estimate errs high) and compared with the memory
available now. Past it, one warning line names the bounded-memory route. It is a warning, not a
refusal: the estimate is a line through a few measured points, and a machine with swap or a dump
whose pages compress worse than the excerpts' may still get through.
"""
from __future__ import annotations

import os

# DirectRunner's peak RSS on the English excerpt repeated k times as a multistream dump, each copy
# with its own link graph (benchmarks/wiki_mrc.py and wiki_mrc_memory.py; docs/scale_out.md): MB at
# no input, and the steepest MB per MB of XML measured between two scales (it grows with the dump).
BASE_MB = 300.0
MB_PER_XML_MB = 1.75
XML_PER_BZ2_BYTE = 5.7  # decompressed XML per compressed byte: 3.6 (en) to 5.7 (el) in the excerpts
AVAILABLE_MB_VARIABLE = "XLU_AVAILABLE_MEMORY_MB"  # overrides the reading below (tests, constrained hosts)


def xml_megabytes(path: str, size_bytes: int) -> float:
    """A dump file's XML in MB, estimated from its size on disk."""
    ratio = XML_PER_BZ2_BYTE if path.endswith(".bz2") else 1.0
    return size_bytes * ratio / 1e6


def predicted_peak_mb(xml_mb: float) -> float:
    return BASE_MB + MB_PER_XML_MB * xml_mb


def available_mb() -> float | None:
    """Memory this process can still use, in MB: XLU_AVAILABLE_MEMORY_MB if set, else the least of
    /proc/meminfo's MemAvailable and a cgroup's limit less its use; None when nothing says."""
    forced = os.environ.get(AVAILABLE_MB_VARIABLE)
    if forced:
        return float(forced)
    readings = [mb for mb in (_meminfo_available_mb(), _cgroup_room_mb()) if mb is not None]
    if not readings:
        try:
            readings.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 1e6)
        except (ValueError, OSError, AttributeError):
            return None
    return min(readings)


def _meminfo_available_mb() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 / 1e6
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_room_mb() -> float | None:
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        if limit == "max":
            return None
        with open("/sys/fs/cgroup/memory.current") as f:
            used = int(f.read().strip())
        return (int(limit) - used) / 1e6
    except (OSError, ValueError):
        return None


def is_direct_runner(runner) -> bool:
    name = runner if isinstance(runner, str) or runner is None else type(runner).__name__
    return name in (None, "DirectRunner", "direct", "BundleBasedDirectRunner", "SwitchingDirectRunner")


def direct_runner_warning(sizes: dict[str, int], runner) -> str | None:
    """The warning line when DirectRunner's predicted peak for dumps of these sizes (path -> bytes)
    is past the available memory, else None."""
    if not sizes or not is_direct_runner(runner):
        return None
    room = available_mb()
    if room is None:
        return None
    xml_mb = sum(xml_megabytes(path, size) for path, size in sizes.items())
    peak = predicted_peak_mb(xml_mb)
    if peak <= room:
        return None
    return (f"warning: DirectRunner holds the whole job in memory: ~{_size(xml_mb)} of dump XML predicts a peak "
            f"of ~{_size(peak)}, past the {_size(room)} available; for bounded memory run "
            f"--runner pipelines.dask.runner.DaskRunner (docs/scale_out.md)")


def _size(mb: float) -> str:
    return f"{mb / 1e3:,.1f} GB" if mb >= 1e3 else f"{mb:,.0f} MB"
