"""`results export --format`: the stored cases in the formats that CI systems, dashboards
and scripts read (docs/schemas.md). Pure functions of results.exported's rows.

- csv: tidy, one row per (run, case), what was varied first, the figures after;
- bmf: Bencher Metric Format (bencher.dev/docs/reference/bencher-metric-format): per
  benchmark, `latency` in ns (Bencher's built-in measure) and, where the kernel has a
  rate, `bandwidth` in MB/s, each with lower_value and upper_value from the launch-aware
  95% interval;
- gab: github-action-benchmark's custom JSON (name, unit, value, range, extra), latency
  for its customSmallerIsBetter tool or bandwidth for customBiggerIsBetter;
- prom: Prometheus text exposition (views/prometheus.py), labels kernel, size, ranks,
  MPI, hosts and the rest of the case.

A name (bmf, gab) or label set (prom) names the case and its MPI library: where several
runs of the selection hold the same case, the latest run's figures are the ones given.
"""

from __future__ import annotations

import csv
import io
import json

from ..store import names
from .prometheus import exposition

# The columns of a tidy row before the kernel's parameters and the run's --info labels:
# what was varied; then the figures.
VARIED = ("run", "started_utc", "kernel", "send_mode", "bytes", "ranks", "window", "sync",
          "map_by", "bind_to", "transport", "cache", "validated", "oversubscribed", "mpi",
          "hosts")
FIGURES = ("launches", "n", "median_s", "ci_low_s", "ci_high_s", "ci_basis", "within_ci_low_s",
           "within_ci_high_s", "between_launch_cv", "within_launch_cv", "dominant",
           "between_command_cv", "command_basis", "p05_s", "p95_s", "mean_s", "stddev_s",
           "precision", "capped", "outliers", "invalid", "bandwidth_MBps", "busbw_MBps",
           "bus_factor", "rank_mean_median_s", "ceiling_MBps", "ceiling_fraction", "case_key")
MEASURES = ("latency", "bandwidth")
# BMF's units: Bencher's built-in latency measure is in nanoseconds; bandwidth in MB/s.
BMF_SCALE = dict(zip(MEASURES, (1e9, 1.0)))


def csv_text(rows: list[dict]) -> str:
    """One row per (run, case): VARIED, then each parameter any case has, then each --info
    label any run has, then FIGURES. A blank cell: not set for that case."""
    params = sorted({k for r in rows for k in r["case"]["params"]})
    info = sorted({k for r in rows for k in r["info"]})
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[*VARIED, *map(param_column, params), *info,
                                             *FIGURES], lineterminator="\n",
                            extrasaction="ignore")
    writer.writeheader()
    for r in rows:
        params = {param_column(k): v for k, v in r["case"]["params"].items()}
        writer.writerow({**r["case"], **params, **r["info"], "run": r["run"],
                         "started_utc": r["started_utc"],
                         "mpi": r["mpi"], "hosts": ",".join(r["hosts"]),
                         "oversubscribed": r["oversubscribed"]})
    return out.getvalue()


def param_column(name: str) -> str:
    """A kernel parameter's column: its name, or param_NAME where a column has the name
    (vector_sum's n is its length; the figures' n, the samples)."""
    return f"param_{name}" if name in VARIED or name in FIGURES else name


def bmf(rows: list[dict]) -> dict:
    """{benchmark: {measure: {value, lower_value, upper_value}}}; a bound the case lacks
    (one launch without history: no interval) is left out, as BMF allows."""
    out = {}
    for r in rows:
        measures = {m: _bmf_metric(scaled(figures, scale)) for m, scale in BMF_SCALE.items()
                    if (figures := metric(r["case"], m))}
        if measures:  # an imported size with a figure of neither kind has nothing to say
            out[name(r)] = measures
    return out


def gab(rows: list[dict], measure: str) -> list[dict]:
    """github-action-benchmark's entries for one measure: latency (µs, smaller is better)
    or bandwidth (MB/s, bigger is better); range: the interval's larger half-width."""
    scale, unit = (1e6, "us") if measure == "latency" else (1.0, "MB/s")
    entries = {}
    for r in rows:
        figures = metric(r["case"], measure)
        if not figures:
            continue
        value, low, high = scaled(figures, scale)
        launches = r["case"]["launches"]
        entry = {"name": name(r), "unit": unit, "value": value,
                 "extra": f"run {r['run']}, {launches} launch{'es' * (launches != 1)}, "
                          f"interval: {r['case']['ci_basis']}"}
        if low is not None:
            entry["range"] = f"± {_g(max(high - value, value - low))}"
            entry["extra"] += f"; 95% interval {_g(low)} to {_g(high)} {unit}"
        entries[entry["name"]] = entry
    return list(entries.values())


def prom(rows: list[dict]) -> str:
    """Gauges per case: the median time and its interval's bounds in seconds, and the
    bandwidth with its bounds in bytes per second where the kernel has one."""
    latest = {}
    for r in rows:
        lab = labels(r)
        latest[json.dumps(lab, sort_keys=True)] = (lab, r["case"])

    def gauges(measure: str, scale: float, unit: str, what: str):
        picked = [(lab, metric(case, measure)) for lab, case in latest.values()]
        picked = [(lab, scaled(f, scale)) for lab, f in picked if f]
        return [(f"commscope_{measure}_{unit}{suffix}", "gauge", f"{what}{text}",
                 [(lab, f[i]) for lab, f in picked if f[i] is not None])
                for i, (suffix, text) in enumerate((
                    ("", ", median over launches"),
                    ("_lower", ", lower end of the launch-aware 95% interval"),
                    ("_upper", ", upper end of the launch-aware 95% interval")))]
    return exposition(gauges("latency", 1.0, "seconds", "time per operation")
                      + gauges("bandwidth", 1e6, "bytes_per_second", "payload bandwidth"))


def metric(case: dict, measure: str) -> tuple | None:
    """(value, lower, upper) of a measure in seconds or MB/s; None where the case has
    none. A bandwidth is bytes over time, so its lower end is the time's upper end's."""
    t, low, high = case["median_s"], case["ci_low_s"], case["ci_high_s"]
    if measure == "latency":
        return (t, low, high) if t is not None else None
    bw = case.get("bandwidth_MBps")
    if not bw or not t:
        return None
    return bw, bw * t / high if high else None, bw * t / low if low else None


def name(r: dict) -> str:
    """The case and its MPI library, as a dashboard's series name."""
    return f"{names.identity(r['identity'])} ({r['mpi']})"


def labels(r: dict) -> dict:
    c, ident = r["case"], r["identity"]
    rest = {k: v for k, v in ident.items() if k not in ("kernel", "bytes", "np", "ranks",
                                                       "send_mode", "params", "hosts")}
    return {"kernel": c["kernel"], "send_mode": c["send_mode"] or "", "size": c["bytes"],
            "ranks": c["ranks"], "mpi": r["mpi"], "hosts": ",".join(r["hosts"]),
            "params": ",".join(f"{k}={v}" for k, v in sorted(c["params"].items())),
            "settings": ",".join(f"{k}={v}" for k, v in sorted(rest.items())
                                 if v not in (None, False, ""))}


def scaled(figures: tuple, scale: float) -> tuple:
    return tuple(None if v is None else v * scale for v in figures)


def _g(x: float) -> str:
    """Four significant digits, without an exponent up to a million."""
    return f"{x:.4g}" if x < 1e3 else f"{x:.0f}"


def _bmf_metric(figures: tuple) -> dict:
    value, low, high = figures
    return {"value": value, **({"lower_value": low, "upper_value": high} if low is not None
                               else {})}
