"""What is wrong with a run's figures, and one remedy per kind that fits the options used.

Pure functions over stored cases and their summaries. A warning says what was seen at
one case (one per kind and case, the worst of its launches) with a severity to rank
the cases by; it is stored with the run. The remedy is the kind's, chosen from the
run's settings when the quality block is shown (`block`): never advice to do what the
run already did. The terminal and the report show the same block, once per command.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..store import names
from ..system import units
from ..store.cases import Case
from ..store.rows import WarningRow
from .replication import UNUSUAL
from .stats import median_ci
from .summary import CaseSummary, case_summary
from .verdict.threshold import LEAST_LAUNCHES, more_launches

TIMER_SPAN_FACTOR = 100  # a sample should span >= 100 timer steps (docs/native.md)
# A collective's sample is one call, as OSU times it: warned of only where the timer's
# steps are a tenth of it or more, not at every small size.
CALL_SPAN_FACTOR = 10
DRIFT_LIMIT = 0.05  # first- and last-third medians apart by > 5%, CIs disjoint
SLOW_FIRST_FACTOR = 2.0  # a first sample > 2x the median and above every later one
WORST = 3  # cases named per kind in the block
BROAD = 2.0  # an interval wider than x/BROAD names its cause (broad)
SLOW_LAUNCH = 1.5  # a launch this many times the others' median: the cause of a broad one
CAPPED_SHARE = 0.1  # capped: more than this share of the run's cases short of --precision
RECURRING = ("drift", "slow_first")  # flagged only where most of a case's launches show them

# Each kind: what it means, for the block's line (the cases' own figures follow).
KINDS = {
    "oversubscribed": "more ranks than cores: latencies include time-slicing",
    "wide": "launches differ far more here than at the run's other cases (p < 0.01)",
    "broad": f"95% interval wider than x/{BROAD:g} (its high end over {BROAD:g}^2 times its "
             "low): the cause follows",
    "capped": "95% interval wider than --precision where --max-time ran out: the budget, "
              "not a case, is short",
    "one_launch": "one launch: the variation between launches is unknown",
    "other_state": "a launch in another state (1.5x off at 3/4 of the run's cases or more) or "
                   "stalled at a case (4x), named and left out of the figures",
    "disagree": "the launches (one launch: its samples) disagree beyond any interval (its "
                "high end more than 10 times its low): their medians instead",
    "levels": "earlier commands fall into two levels: this host switches between states",
    "above_ceiling": "bandwidth above the copy ceiling measured beside it, which no transfer "
                     "beats: withheld from the table, a finding to explain",
    "all_late": "every repetition started late under --sync window: no figures",
    "late": "repetitions started late under --sync window, left out of the statistics",
    "few_samples": "too few samples for a 95% CI of the median (6 needed)",
    "drift": "median drifted within a launch: something else ran",
    "short_samples": f"samples under {TIMER_SPAN_FACTOR}x the timer's resolution",
    "short_calls": f"single calls under {CALL_SPAN_FACTOR}x the timer's resolution",
    "slow_first": "first repetition far slower than the median: warm-up not steady",
    # what stopped a watch's probe (watch/probe.py), in health's words
    "unreachable": "a watch's probe ended in an error: a host down, or ranks that cannot talk",
    "hung": "a watch's probe made no progress within its timeout: a hung rank or link",
    "over budget": "a watch's probe passed its --budget and was stopped",
}
PROBE_REMEDY = {
    "unreachable": "check the hosts and the route between them (ping, ssh), then run "
                   "`commscope health --screen --hosts ...` on them",
    "hung": "run `commscope health --screen --hosts ...` on the probe's hosts: it names the "
            "node or link that hangs",
    "over budget": "raise --budget, or measure fewer cases or launches in the watch's plan",
}


@dataclass(frozen=True)
class Advice:
    kind: str
    message: str  # what was seen at the case, in a few words
    case_id: int | None = None  # None: about the whole run
    severity: float = 0.0  # the kind's own measure (CV, drift, ...): the worst first


def run_advice(oversubscribed: bool, ranks: int, summaries: list[CaseSummary],
               goal: float | None = None) -> list[Advice]:
    """What holds for the whole run: its ranks outnumbered cores, it made one launch, or
    its time budget stopped cases short of the precision asked for where more samples
    would have narrowed them (a run's, not a case's: each case has its share of
    --max-time; `goal`, the run's --precision)."""
    found = []
    if oversubscribed:
        found.append(Advice("oversubscribed", f"{ranks} ranks", None, float(ranks)))
    if any(s.ci_basis == "one launch" for s in summaries):
        found.append(Advice("one_launch", "between-launch variance unknown", None, 0.0))
    # More time helps only where a launch median's own error, not the launches' spread,
    # makes the interval wide (dominant "within"; one launch has only that error).
    short = [s for s in summaries if goal and s.capped and s.precision is not None
             and s.precision > goal and s.dominant in ("within", None)]
    # A few cases short of the goal are those cases' own noise, which their intervals
    # show; the run's budget is short where many are.
    if len(short) > CAPPED_SHARE * len(summaries):
        # counted as the export's `capped` column counts: every case the budget stopped
        capped = sum(bool(s.capped) for s in summaries)
        found.append(Advice("capped", f"{capped} of {len(summaries)} cases stopped by "
                                      f"--max-time, {len(short)} of them where more samples "
                                      "would narrow the interval", None,
                            len(short) / len(summaries)))
    return found


def _deviations(medians) -> np.ndarray:
    """Each launch's log median less the mean of the case's other launches."""
    logs = np.log([m for m in medians if m and m > 0])
    return np.array([y - np.delete(logs, k).mean() for k, y in enumerate(logs)])


def launch_effects(summaries: list[CaseSummary]) -> dict[int, tuple[int, int]]:
    """Launch k -> (the cases where it ran SLOW_LAUNCH times slower, or faster, than the
    case's other launches, the cases it measured), over a run's cases of two or more
    launches (a case's i-th launch median is launch i: auto's later launches measure a
    subset of the cases, never skipping one). Signed: slower counts up, faster down."""
    found: dict[int, list[float]] = {}
    for s in summaries:
        medians = s.launch_medians_s or ()
        if len(medians) >= 2:
            for k, d in enumerate(_deviations(medians), start=1):
                found.setdefault(k, []).append(float(d))
    cut = math.log(SLOW_LAUNCH)
    return {k: (sum(x >= cut for x in d) - sum(x <= -cut for x in d), len(d))
            for k, d in found.items()}


def broad(case_id: int, summary: CaseSummary, effects: dict[int, tuple[int, int]]
          ) -> Advice | None:
    """A case whose 95% interval is wider than x/BROAD, with its cause: one of its launches
    that ran SLOW_LAUNCH times slower or faster than its others (and at how many of the
    run's sizes that launch did), one launch's few samples, commands that differ more
    than launches, or its launches' own span."""
    low, high = summary.ci_low_s, summary.ci_high_s
    if not low or not high or low <= 0 or high / low <= BROAD ** 2:
        return None
    factor = math.sqrt(high / low)
    medians = summary.launch_medians_s or []
    dev = _deviations(medians) if len(medians) >= 2 else np.zeros(0)
    k = int(np.argmax(np.abs(dev))) + 1 if dev.size else 0
    if k and abs(dev[k - 1]) >= math.log(SLOW_LAUNCH):
        way, sign = ("slower", 1) if dev[k - 1] > 0 else ("faster", -1)
        count, of = effects.get(k, (0, 0))
        where = f", as it did at {sign * count} of the run's {of} sizes" \
            if sign * count > 1 else ", at this size alone"
        cause = (f"launch {k} ran {units.ratio(math.exp(abs(dev[k - 1])), 1)}x {way} than "
                 f"the others{where}")
    elif summary.ci_basis == "one launch":
        cause = f"one launch of {summary.n} samples"
    elif summary.command_basis != "assumed" and \
            (summary.between_command_cv or 0) > (summary.between_launch_cv or 0):
        cause = (f"commands on these hosts differ by "
                 f"{units.percent(summary.between_command_cv)} (sd), more than launches")
    else:
        assumed = ", commands assumed to differ as much" \
            if summary.command_basis == "assumed" else ""
        cause = (f"its {len(medians)} launch medians span {units.us_short(min(medians))}-"
                 f"{units.us_short(max(medians))} us{assumed}")
    return Advice("broad", f"x/{units.ratio(factor, 1)}: {cause}", case_id, factor)


def case_advice(cases: list[Case], summary: CaseSummary, resolution_s: float | None
                ) -> list[Advice]:
    """Everything worth a warning about one case (its launches' cases and their combined
    summary; the timer's resolution): one per kind, of its worst launch; the case is
    named by its first."""
    found: dict[str, tuple[str, float]] = {}
    showing: dict[str, int] = {}  # how many launches show each kind
    for case in cases:
        for kind, message, severity in launch_checks(case, case_summary(case), resolution_s):
            showing[kind] = showing.get(kind, 0) + 1
            label = f"{message} (launch {case.launch})" if len(cases) > 1 else message
            if kind not in found or severity > found[kind][1]:
                found[kind] = (label, severity)
    # A drift or a slow first repetition in one launch of several is a machine state the
    # launch-aware interval already holds; in most of them it is the case's own.
    for kind in RECURRING:
        if kind in found and len(cases) > 1 and showing[kind] <= len(cases) / 2:
            del found[kind]
    for check in (_wide, _few, _other_state, _disagree, _levels, _above_ceiling):
        seen = check(summary, cases[0].settings)
        if seen:
            found[seen[0]] = seen[1:]
    return [Advice(kind, message, cases[0].id, severity)
            for kind, (message, severity) in found.items()]


def launch_checks(case: Case, s: CaseSummary, resolution_s: float | None) -> list[tuple]:
    """(kind, what was seen, severity) of one launch of a case. Its spread and tails are
    data (the summary's CV and p99), not warnings: at a thousand samples some are always
    beyond a z-score, and 1% of slow samples leave the median alone."""
    checks = (_all_late, _drift, _slow_first)
    return list(filter(None, [c(case, s) for c in checks] + [_short(case, resolution_s)]))


def _wide(s: CaseSummary, settings: dict):
    """Where the case's launches differ far more than its run's others do, and its
    interval is wider than --precision for it: a noisy run is the run's line
    (variance_line), not every case's flag."""
    p = s.launch_spread_p
    goal = settings.get("precision")
    if p is not None and p < UNUSUAL and (not goal or (s.precision or 0) > goal):
        spread = float(np.std(np.log(s.launch_medians_s), ddof=1))
        return ("wide", f"launch medians {units.percent(math.expm1(spread))} apart (sd), p "
                f"{p:.1g}", -math.log10(max(p, 1e-300)))
    return None


def _other_state(s: CaseSummary, settings: dict):
    """The launches left out of the case's figures (states.py), the farthest first."""
    odd = sorted(s.other_state, key=lambda o: -abs(math.log(o.ratio)))
    if not odd:
        return None
    return ("other_state", "; ".join(o.words() for o in odd), abs(math.log(odd[0].ratio)))


def disagree_words(groups) -> str:
    """'launches disagree: 0.3 us in 3, 28 us in 1' from summary's `disagree` groups; one
    launch's: 'samples span 15-160 us in one launch'."""
    if len(groups) == 1 and groups[0][2] == 1:
        low, high, _ = groups[0]
        return f"samples span {units.us_short(low)}-{units.us_short(high)} us in one launch"
    def group(low, high, count):
        span = units.us_short(low) if high / low < 1.05 else \
            f"{units.us_short(low)}-{units.us_short(high)}"
        return f"{span} us in {count}"
    return "launches disagree: " + ", ".join(group(*g) for g in groups)


def _disagree(s: CaseSummary, settings: dict):
    if not s.disagree:
        return None
    groups = s.disagree
    return ("disagree", disagree_words(groups), groups[-1][1] / groups[0][0])


def _levels(s: CaseSummary, settings: dict):
    """The history of the case has two levels (replication.regimes), and which one this
    command's median is nearer."""
    if not s.levels or s.median_s is None:
        return None
    (low, n_low), (high, n_high) = s.levels
    nearer = "higher" if s.median_s > math.sqrt(low * high) else "lower"
    return ("levels", f"{units.us_short(low)} us in {n_low} earlier commands, "
            f"{units.us_short(high)} us in {n_high}; this one {units.us_short(s.median_s)} "
            f"us, the {nearer}", high / low)


def _above_ceiling(s: CaseSummary, settings: dict):
    """More bytes per second than one core copies them (summary's ceiling_fraction > 1):
    never shown as a plain number."""
    fraction = s.ceiling_fraction
    if fraction is None or fraction <= 1:
        return None
    return ("above_ceiling", f"{units.ratio(fraction)}x the copy ceiling of "
            f"{units.rate(s.ceiling_MBps)} MB/s", fraction)


def _all_late(case, s):
    if s.n == 0:
        return ("all_late", "no valid repetition", 1.0)
    if s.invalid:
        share = s.invalid / (s.invalid + s.n)
        return ("late", f"{s.invalid} of {s.invalid + s.n} repetitions late", share)
    return None


def _few(s: CaseSummary, settings: dict):
    """No interval at all: one launch of fewer than 6 samples (several launches of any
    size have the launches' interval)."""
    if s.n and s.ci_low_s is None and not s.disagree:
        return ("few_samples", f"{s.n} samples", 1 / s.n)
    return None


def _drift(case, s):
    """The median of the first third against the last: the machine changed during the case."""
    samples = case.valid_samples
    third = samples.size // 3
    if third < 6:
        return None
    first, last = samples[:third], samples[-third:]
    a, b = np.median(first), np.median(last)
    (a_low, a_high), (b_low, b_high) = median_ci(first), median_ci(last)
    if abs(b - a) > DRIFT_LIMIT * a and (b_low > a_high or a_low > b_high):
        change = units.percent((b - a) / a, signed=True, decimals=0)
        return ("drift", f"{change} from the first third of samples to the last",
                abs(b - a) / a)
    return None


def _slow_first(case, s):
    samples = case.valid_samples
    if samples.size < 3:
        return None
    median = float(np.median(samples))
    if samples[0] > SLOW_FIRST_FACTOR * median and samples[0] > samples[1:].max():
        times = samples[0] / median
        return ("slow_first", f"{units.ratio(times, 1)}x the median", times)
    return None


def _short(case, resolution_s):
    """One sample's span (batch x seconds per iteration) against the timer's resolution."""
    samples = case.valid_samples
    if not resolution_s or not samples.size:
        return None
    span = float(np.median(samples)) * case.batch
    kind, factor = ("short_calls", CALL_SPAN_FACTOR) if case.sample == "call" \
        else ("short_samples", TIMER_SPAN_FACTOR)
    if span < factor * resolution_s:
        return (kind, f"{units.us(span)} us against {units.us(resolution_s)} us",
                resolution_s / span)
    return None


def options(settings: dict, context: dict | None, oversubscribed: bool = False,
            family: str | None = None) -> dict:
    """What a remedy must fit: the run's settings, whether its ranks were bound, as
    --bind-to asked or as the launcher did unasked (Open MPI binds 2 ranks to cores by
    default): every rank's binding one CPU in the context record's placement; whether
    ranks outnumbered cores, where --bind-to core is refused; and whether `commscope app`
    ran it (its kernel's `family`), which has no --launches nor --max-time."""
    placement = (context or {}).get("placement") or []
    bound = settings.get("bind_to") not in (None, "none") or bool(placement) and all(
        str(p.get("binding", "")).isdigit() for p in placement)
    return {**settings, "bound": bound, "oversubscribed": oversubscribed,
            "app": family == "application"}


# An app run is one launch of the app's solves: what more launches would do, its runs do.
_APP_AGAIN = ("run the app again, later or on a quieter machine, and `commscope compare` "
              "the runs (an app run is one launch)")


def remedy(kind: str, settings: dict, cores: int | None = None) -> str:
    """The one thing to do about a kind, given the options the run used (`options`)."""
    bound = settings.get("bound", settings.get("bind_to") not in (None, "none"))
    # Pinning is advice only where `run --bind-to core` would accept it: not oversubscribed.
    pin = not bound and not settings.get("oversubscribed")
    launches = settings.get("launches", "auto")
    if settings.get("app") and kind in ("wide", "one_launch", "disagree", "capped"):
        return _APP_AGAIN
    if settings.get("app") and kind == "few_samples":
        return "raise --iters" if settings.get("iters") else "raise --min-time"
    if kind in PROBE_REMEDY:
        return PROBE_REMEDY[kind]
    if kind == "oversubscribed":
        per_host = f" (this host has {cores} cores)" if cores else ""
        return f"run at most one rank per core{per_host}, or spread them with --hosts"
    if kind == "wide":
        if launches != "auto":
            return more_launches(given=launches) + (
                ", or use auto" if int(launches) >= LEAST_LAUNCHES else "")
        if pin:
            return "pin ranks with --bind-to core, so launches differ less"
        return "raise --max-time so auto can make more launches, or accept the wider interval"
    if kind == "capped":
        return (f"raise --max-time (it was {settings.get('max_time')} s), "
                "or accept the wider interval")
    if kind == "levels":
        return ("the interval is that of the level this command fell in (the spread "
                "between commands learned within each level); to compare commands of two "
                "levels, compare --live alternates them")
    if kind == "broad":
        return ("where a launch ran slow, rerun on a quieter machine; where the launches "
                f"differ throughout, {remedy('wide', settings)}")
    if kind == "other_state":
        return ("nothing to do for this figure, which is its other launches'; where launches "
                "often land in another state the machine is shared: measure where nothing "
                "else runs, and answer an A/B question with compare --live")
    if kind == "disagree":
        more = "measure in more launches" if launches == "auto" else \
            more_launches(given=launches)
        return f"{more}, so that a majority names the odd one, on a quieter machine"
    if kind == "above_ceiling":
        cold = "" if settings.get("cold_cache") else "measure with --cold-cache, and "
        return (f"{cold}read docs/native.md, 'Copy ceilings': the transfer found its data in "
                "cache where the copy did not, or the library copied with more than one core")
    if kind == "one_launch":
        return more_launches()
    if kind in ("all_late", "late"):
        return "use --sync barrier, or fewer ranks per core"
    if kind == "few_samples":
        return "raise --iters" if settings.get("iters") else "raise --min-time or --max-time"
    if kind == "drift":
        return ("rerun on a quieter machine; the launch-aware interval includes drift "
                "between launches")
    if kind == "short_calls":
        return ("compare such sizes only with care: a collective is timed one call at a "
                "time, as OSU times it, and the clock's own steps are in each")
    if kind == "short_samples":
        return ("use --sync barrier, which batches calls to span it"
                if settings.get("sync") == "window" else "rerun on a quieter machine")
    return "nothing to do: the median and its interval are robust to it"


# The parts of a launch median's variation, as the summary gives each (a CV), and what to
# do where the part is the largest.
PARTS = {"within a launch": "within_launch_cv", "between launches": "between_launch_cv",
         "between commands": "between_command_cv"}


def _part_remedy(part: str, settings: dict) -> str:
    if part == "within a launch":
        return remedy("few_samples", settings) if settings.get("app") else \
            "raise --max-time for more samples a launch"
    if part == "between launches":
        return remedy("wide", settings)
    return ("run the same command again later: the history of its commands replaces the "
            "assumption, and compare reads it")


def _part(name: str, summaries: list[CaseSummary]) -> float | None:
    """The median over the cases of one part; between launches, of the cases measured in
    two or more launches alone (one launch's is its history's, none of this run's)."""
    field = PARTS[name]
    found = [getattr(s, field) for s in summaries if getattr(s, field) is not None
             and (name != "between launches" or s.launches >= 2)]
    return float(np.median(found)) if found else None


def variance_lines(run_id: int, summaries: list[CaseSummary], settings: dict) -> list[str]:
    """A run's short lines, one fact each: how much a launch median varies within a launch
    (its samples), between launches and between commands (the median over its cases of
    each); the largest part and what to do about it; the precision goal's outcome."""
    parts = {name: v for name in PARTS if (v := _part(name, summaries)) is not None}
    if not parts:
        return []
    largest = max(parts, key=parts.get)
    assumed = any(s.command_basis == "assumed" for s in summaries)
    said = ", ".join(f"{units.percent(v)} {name}"
                     + (" (assumed: as much as its launches' medians spread)"
                        if name == "between commands" and assumed else "")
                     for name, v in parts.items())
    return [f"run {run_id}: a launch median varies {said}{_states_said(summaries)}",
            f"run {run_id}: the largest part is {largest}; remedy: "
            f"{_part_remedy(largest, settings)}",
            *_goal_met(run_id, summaries, settings.get("precision"))]


def _goal_met(run_id: int, summaries: list[CaseSummary], goal: float | None) -> list[str]:
    """--precision's outcome: how many of the run's cases met it (those without an
    interval counted, and named), and the widest."""
    judged = [s for s in summaries if s.precision is not None]
    if not goal or not judged:
        return []
    met = sum(s.precision <= goal for s in judged)
    widest = max(judged, key=lambda s: s.precision)
    where = f"{names.case(widest.kernel, widest.send_mode, widest.bytes)} np{widest.ranks}"
    asked = units.percent(goal, decimals=None)
    without = len(summaries) - len(judged)
    none = f", {without} without an interval" if without else ""
    return [f"run {run_id}: precision goal +-{asked}: met by {met} of "
            f"{len(summaries)} cases{none}; the widest +-{units.percent(widest.precision)} "
            f"({where})"]


def _states_said(summaries: list[CaseSummary]) -> str:
    """What the variance line leaves out: the launches in another state, and the stalls."""
    odd = [o for s in summaries for o in s.other_state]
    states = sorted({o.launch for o in odd if o.cause == "state"})
    stalls = sum(o.cause == "stall" for o in odd)
    said = []
    if states:
        said.append(f"launch{'es' if len(states) > 1 else ''} "
                    f"{', '.join(map(str, states))} in another state left out")
    if stalls:
        said.append(f"{stalls} stalled case{'s' if stalls > 1 else ''} left out")
    return f" ({'; '.join(said)})" if said else ""


def block(found: list[tuple[WarningRow, str | None, dict]],
          cores: int | None = None) -> list[str]:
    """The quality block's flags: three short lines per kind (the name the table's flags column
    gives its cases), the number of cases (runs, for run-wide kinds), the worst WORST
    cases and one remedy. `found`: (stored warning, case name, run settings)."""
    by_kind: dict[str, list] = {}
    for warning, name, settings in found:
        by_kind.setdefault(warning.kind, []).append((warning, name, settings))
    lines = []
    for kind in sorted(by_kind, key=lambda k: list(KINDS).index(k) if k in KINDS else 99):
        rows = sorted(by_kind[kind], key=lambda r: -(r[0].severity or 0))
        count = len(rows)
        unit = "run" if rows[0][1] is None else "case"
        # Warnings stored before schema 5 have no severity, and their message is a sentence
        # with its old remedy: those are named only.
        worst = "; ".join(name or "run" if w.severity is None else
                          f"{name or 'run'}: {w.message}" for w, name, _ in rows[:WORST])
        more = f"; and {count - WORST} more" if count > WORST else ""
        lines += [f"flag {kind}: {count} {unit}{'s' if count > 1 else ''}, "
                  f"{KINDS.get(kind, kind)}",
                  f"  worst: {worst}{more}",
                  f"  remedy: {remedy(kind, rows[0][2], cores)}"]
    return lines
