"""``ovpool run --profile``: per-layer times and latency percentiles of repeated runs.

The per-layer times come from the engines' own traces: ovpool's runtime reports each layer it
runs (``CompiledModel.infer(trace=...)``, the same trace ``--debug`` prints), OpenVINO its
performance counters (``ovpool.openvino.OpenVINORunner.infer(trace=...)``, ovpool's extension
nodes included). Both hand :class:`LayerTime` records to :meth:`Profile.trace`.
"""

import numpy as np

__all__ = ["LayerTime", "Profile", "progress"]


class LayerTime(str):
    """One executed layer: the trace line (a str, as ``--debug`` prints it) carrying the
    layer's ``name``, ``type`` and ``seconds``."""

    def __new__(cls, line, name, type_, seconds):
        text = super().__new__(cls, line)
        text.name, text.type, text.seconds = name, type_, float(seconds)
        return text


class Profile:
    """Per-layer totals (layers in first-seen order, merged by name and type) and per-run
    latencies."""

    def __init__(self, engine):
        self.engine = engine
        self._layers = {}
        self.latencies = []

    def trace(self, record):
        key = (record.name, record.type)
        calls, total = self._layers.get(key, (0, 0.0))
        self._layers[key] = (calls + 1, total + record.seconds)

    def add_run(self, seconds):
        self.latencies.append(float(seconds))

    def layers(self):
        """[(name, type, calls, total seconds, share of the layers' total in %)], the most
        expensive first."""
        grand = sum(total for _, total in self._layers.values())
        rows = [(name, type_, calls, total, 100.0 * total / grand if grand else 0.0)
                for (name, type_), (calls, total) in self._layers.items()]
        return sorted(rows, key=lambda row: -row[3])

    def latency(self):
        """{"runs", "p50_ms", "p90_ms", "p99_ms", "mean_ms", "throughput_per_s"}."""
        times = np.asarray(self.latencies, dtype=np.float64)
        p50, p90, p99 = np.percentile(times, [50, 90, 99]) * 1e3
        return {"runs": int(times.size), "p50_ms": float(p50), "p90_ms": float(p90),
                "p99_ms": float(p99), "mean_ms": float(times.mean() * 1e3),
                "throughput_per_s": float(times.size / times.sum()) if times.sum() else None}

    def to_dict(self):
        return {"engine": self.engine,
                "layers": [{"name": n, "type": t, "calls": c, "total_ms": s * 1e3,
                            "share_percent": p} for n, t, c, s, p in self.layers()],
                "latency": self.latency()}

    def text(self):
        rows = [(name, type_, str(calls), f"{total * 1e3:.3f}", f"{share:.1f}%")
                for name, type_, calls, total, share in self.layers()]
        headers = ("layer", "type", "calls", "total ms", "share")
        widths = [max(len(v) for v in column) for column in zip(headers, *rows)]
        lines = [f"profile ({self.engine}), layers by total time:"]
        lines += ["  " + "  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip()
                  for row in (headers,) + tuple(rows)]
        latency = self.latency()
        if latency["runs"] > 1:
            lines.append(f"latency over {latency['runs']} runs: p50 {latency['p50_ms']:.3f} ms, "
                         f"p90 {latency['p90_ms']:.3f} ms, p99 {latency['p99_ms']:.3f} ms; "
                         f"throughput {latency['throughput_per_s']:.1f} inferences/s")
        return "\n".join(lines)


# A profile's progress bar appears once the runs have lasted this many seconds.
PROGRESS_AFTER_SECONDS = 2.0


def progress(total, stream, delay=None, mininterval=0.5):
    """A tqdm bar on ``stream`` that appears only once the runs last longer than ``delay``
    seconds (default :data:`PROGRESS_AFTER_SECONDS`) and redraws at most every
    ``mininterval`` seconds; update it between timed runs, never inside one."""
    from tqdm import tqdm

    return tqdm(total=total, unit="run", file=stream, mininterval=mininterval,
                miniters=1 if mininterval == 0 else None, dynamic_ncols=True,
                leave=False, delay=PROGRESS_AFTER_SECONDS if delay is None else delay)
