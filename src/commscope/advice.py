"""Warnings about a run's figures, each with its remedy (as hyperfine gives them).

Pure functions over stored cases and their summaries: what was seen, where,
and what to do about it. They are stored with the run and shown after its
table; `summarize` folds them to one line per kind for the terminal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import names
from .cases import Case
from .stats import median_ci

CV_LIMIT = 0.10  # a coefficient of variation above 10% marks a noisy case
TIMER_SPAN_FACTOR = 100  # a sample should span >= 100 timer steps (docs/native.md)
DRIFT_LIMIT = 0.05  # first- and last-third medians apart by > 5%, CIs disjoint
SLOW_FIRST_FACTOR = 2.0  # a first sample > 2x the median and above every later one


@dataclass(frozen=True)
class Advice:
    kind: str
    message: str
    case_id: int | None = None


def case_advice(case: Case, summary: dict, timer_resolution_s: float | None) -> list[Advice]:
    """Everything worth a warning about one case."""
    where = names.case(case.kernel, case.send_mode, case.bytes)
    found = [check(case, summary, where) for check in (_all_late, _few, _capped, _cv, _drift,
                                                       _slow_first, _outliers)]
    found.append(_short(case, where, timer_resolution_s))
    return [Advice(kind, message, case.id) for kind, message in filter(None, found)]


def run_advice(oversubscribed: bool, ranks: int) -> list[Advice]:
    if not oversubscribed:
        return []
    return [Advice("oversubscribed", f"{ranks} ranks on fewer cores: latencies include "
                   "time-slicing; run fewer ranks per host for clean figures")]


def _all_late(case, s, where):
    if s["n"] == 0:
        return ("all_late", f"every repetition of {where} started late under --sync window, so "
                "it has no figures; use --sync barrier or fewer ranks per core")
    if s["invalid"]:
        return ("late", f"{s['invalid']} repetitions of {where} started late under --sync window "
                "and are left out of its statistics (kept in the store); a less loaded machine "
                "or fewer ranks per core helps")
    return None


def _few(case, s, where):
    if s["n"] and s["ci_low_s"] is None:
        return ("few_samples", f"{where}: {s['n']} samples are too few for a 95% CI of the "
                "median (6 needed); use --precision or raise --iters")
    return None


def _capped(case, s, where):
    if s["capped"] and s["precision"] is not None:
        return ("capped", f"{where} reached +-{s['precision']:.1%}, short of "
                f"+-{s['precision_target']:.1%}, when --max-time "
                f"{case.extra.get('max_time_s', 0):g} s stopped it; raise --max-time or "
                "accept the wider interval")
    return None


def _cv(case, s, where):
    if s["cv"] is not None and s["cv"] > CV_LIMIT:
        return ("cv", f"CV {s['cv']:.0%} at {where}: the machine is noisy; pin ranks with "
                "--bind-to core or raise --precision")
    return None


def _drift(case, s, where):
    """The median of the first third against the last: the machine changed during the case."""
    samples = case.valid_samples
    third = samples.size // 3
    if third < 6:
        return None
    first, last = samples[:third], samples[-third:]
    a, b = np.median(first), np.median(last)
    (a_low, a_high), (b_low, b_high) = median_ci(first), median_ci(last)
    if abs(b - a) > DRIFT_LIMIT * a and (b_low > a_high or a_low > b_high):
        return ("drift", f"the median of {where} drifted by {(b - a) / a:+.0%} from the first "
                "third of its samples to the last: something else ran on this machine; rerun "
                "it, or sweep with launches = K to see launch-to-launch variation")
    return None


def _outliers(case, s, where):
    if s["outliers"]:
        return ("outliers", f"{s['outliers']} of {s['n']} samples of {where} are outliers "
                "(modified z-score > 3.5); they are kept in every figure, and the median and "
                "its CI are robust to them")
    return None


def _slow_first(case, s, where):
    samples = case.valid_samples
    if samples.size < 3:
        return None
    median = float(np.median(samples))
    if samples[0] > SLOW_FIRST_FACTOR * median and samples[0] > samples[1:].max():
        return ("slow_first", f"the first repetition of {where} took "
                f"{samples[0] / median:.1f}x the median: warm-up did not reach a steady state; "
                "the median is robust to it, a longer --min-time or --precision run dilutes it")
    return None


def _short(case, where, resolution_s):
    """One sample's span (batch x seconds per iteration) against the timer's resolution."""
    samples = case.valid_samples
    if not resolution_s or not samples.size:
        return None
    span = float(np.median(samples)) * case.batch
    if span < TIMER_SPAN_FACTOR * resolution_s:
        remedy = ("use --sync barrier, which batches calls to span it"
                  if case.extra.get("sync") == "window" else
                  "its batches were sized on a slower probe: rerun on a quieter machine")
        return ("short_samples", f"samples of {where} last {span * 1e6:.3f} us, under "
                f"{TIMER_SPAN_FACTOR}x the timer's {resolution_s * 1e6:.3f} us resolution; "
                + remedy)
    return None


def fold(warnings) -> list[str]:
    """One line per kind for the terminal: the first message and how many more like it."""
    lines, seen = [], {}
    for w in warnings:
        seen.setdefault(w["kind"], []).append(w["message"])
    for messages in seen.values():
        more = f" (and {len(messages) - 1} more like it)" if len(messages) > 1 else ""
        lines.append(f"commscope: warning: {messages[0]}{more}")
    return lines
