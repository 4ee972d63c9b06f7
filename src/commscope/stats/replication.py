"""The launch as the unit of replication: a case's interval from its launches.

Every launch (one mpirun) has its own placement, page layout and clock state, so
samples inside one launch are not independent evidence about the next launch
(Hoefler & Belli, SC'15, rule 9). Nor are the launches of one command independent
evidence about a command run minutes later: on the machine this was built on,
launches seconds apart agreed more than commands minutes apart did (the means of
10 invocations spread 2.2 times as much as their launches' spread predicted, for
pingpong; docs/statistics.md). A case is modelled on the log scale as

    log m_ck = mu + a_c + b_ck,   a_c ~ N(0, sigma^2) between commands (time),
                                  b_ck ~ N(0, tau^2) between launches of a command,

m_ck the median of launch k of command c. Its interval from one command's K launches
is the mean of their log medians plus or minus t(df) sqrt(s^2 / K + sigma^2), s^2 the
launches' variance (df = K - 1, or more where the run's cases pool theirs:
run_spreads). sigma^2 is learned from the store's history on the same hosts with the
same MPI: as a ratio r = sigma^2 / tau^2 common to a run's cases, from every case with
two or more earlier commands (command_ratios), or from the case's own history (the
variance of its commands' means less their launches' share); without such history it
is taken equal to s^2: commands differ between them as much as launches differ within
one, about what was measured here for pingpong (bw's commands differed less). With
that assumption the interval is t(df) s sqrt(1/K + 1) and its coverage exact, since the
ratio is Student's t (Searle, Casella & McCulloch, "Variance Components", 1992, 3.5,
for the one-way random-effects model); learned, the degrees of freedom are those of
the delta method or Satterthwaite's. The history learns from every earlier command of the
configuration (history): none is left out for lying in another state, since states are
what commands differ by; where the commands step to another level in time (a real
change stored in the same file) sigma^2 is their spread within the two stretches. The
point estimate exp(mean) is the typical launch's median; tau^2 less a launch median's
own error variance (at least 0) says which dominates.

When the launch count was itself chosen from the launches' spread (--launches auto:
launches.py), that choice must not narrow the interval: the count K follows from the
spread s0 of the first P launches (the pilot), and s0 stands for s in the interval, as
in Stein's two-stage procedure (C. Stein, "A two-sample test for a linear hypothesis
whose power is independent of the variance", Ann. Math. Stat. 16(3), 1945): the mean of
all K is independent of s0, so the coverage holds whatever K the pilot chose.

One launch cannot say how much the next one differs. Its interval is the
within-launch one, marked so; or, where the history holds launches of the case, the
launch's median plus or minus t sqrt(tau^2 + sigma^2 + v), tau^2 and sigma^2 the
history's (sigma^2 = tau^2 without enough commands) and v the launch median's own
error variance.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from .states import STALL_GAP, STATE_GAP, stalls
from .stats import LEVEL, Z, median_ci, satterthwaite, t_quantile
from .verdict.inference import (COMMAND_TO_LAUNCH, NO_SPREAD, UNUSUAL, moderated_df,
                                step_at, trend_prior, unusual_p)

MIN_HISTORY_DF = 2  # fewer: a variance from the history says too little
PILOT = 3  # --launches auto: launches every case gets, from which the rest are chosen
MAX_LAUNCHES = 10  # and the most it gets
MIN_POOLED_CASES = 3  # fewer cases in a run: each case's launches alone give its spread



@dataclass(frozen=True)
class Spread:
    """How far one launch's log median falls from the case's mean, as a variance over the
    launches of one command (the common launch effect and the case's own), and its
    degrees of freedom."""
    var: float
    df: float
    # How unusual its own launches' spread is in its run: the p-value of its residual
    # variance against the run's common one (an F test on the moderation's prior); None
    # where it was not pooled with the run's other cases.
    unusual: float | None = None


def case_spread(logs: np.ndarray, pilot: int | None = None) -> Spread:
    """One case's launches alone: the variance of its log launch medians, of the first
    `pilot` when the pilot chose how many to make, else of all."""
    first = logs[:pilot] if pilot and logs.size > pilot else logs
    return Spread(float(first.var(ddof=1)), first.size - 1)


def log_size(sizes) -> np.ndarray:
    """The covariate a variance follows across message sizes: log2(bytes + 1), 0 B too."""
    return np.log2(np.asarray(sizes, dtype=float) + 1)


def run_spreads(table: np.ndarray, sizes=None) -> list[Spread]:
    """The spreads of a run's cases from all of them at once (_spreads), in two blocks of
    sizes where the launches' common effects differ between small and large messages
    (launch_regimes): a launch in a slow state for small messages only is then slow for
    them, not a common effect that widens every size's interval."""
    at = None if sizes is None else launch_regimes(table, sizes)
    if at is None:
        return _spreads(table, sizes)
    sizes = np.asarray(sizes)
    out: list[Spread | None] = [None] * table.shape[0]
    for block in (sizes <= at, sizes > at):
        for i, spread in zip(np.flatnonzero(block), _spreads(table[block], sizes[block])):
            out[i] = spread
    return out


MIN_REGIME_SIZES = 8  # a block of sizes with its own launch effects holds at least this many


def launch_regimes(table: np.ndarray, sizes) -> int | None:
    """The size after which the launches' common effects change, where the BIC prefers
    a two-way layout (cases x launches, additive) in two blocks of sizes, split between
    two sizes with MIN_REGIME_SIZES or more cases a side, to one over all; else None.
    (With 3 a side, one noisy size at an end of the range, 8 B ping-pong here, split off
    a block of 3-4 sizes that was never flagged and covered 75-79%: an independent
    review; that is a size unlike the others, which _spreads tests leaving it out.)"""
    cases, k = table.shape
    if k < 2 or cases < 2 * MIN_REGIME_SIZES:
        return None
    sizes = np.asarray(sizes)
    n = cases * k

    def rss(rows: np.ndarray) -> float:
        r = rows - rows.mean(axis=1, keepdims=True) - rows.mean(axis=0) + rows.mean()
        return float(np.sum(r ** 2))

    def bic(value: float, params: int) -> float:
        return n * math.log(max(value, 1e-300) / n) + params * math.log(n)
    best, at = bic(rss(table), cases + k - 1), None
    ordered = np.unique(sizes)
    for size in ordered[:-1]:
        low = sizes <= size
        if min(low.sum(), (~low).sum()) < MIN_REGIME_SIZES:
            continue
        found = bic(rss(table[low]) + rss(table[~low]), cases + 2 * (k - 1) + 1)
        if found < best:
            best, at = found, int(size)
    return at


def _spreads(table: np.ndarray, sizes=None) -> list[Spread]:
    """The spreads of a run's cases from all of them at once: `table` is cases x launches
    of log launch medians (launch k of every case in column k), `sizes` each case's
    message size. A launch is faster or slower at every size (its common effect, with
    K - 1 degrees of freedom), and each case varies on its own besides (the residual of the
    two-way layout). The residual variances are moderated towards a prior that follows
    the message size (a constant, a line or a step in log size, as a protocol switch
    makes: verdict.inference.trend_prior), as far as their spread about it allows (empirical
    Bayes: G. K. Smyth, "Linear models and empirical Bayes methods for assessing
    differential expression in microarray experiments", Stat. Appl. Genet. Mol. Biol.
    3(1), 2004, section 6.2), which gives 3 launches of 24 sizes the degrees of freedom
    of dozens where the sizes vary alike, and each its own where they do not. A case's
    spread is the common effect's mean square over S plus (1 - 1/S) its moderated
    residual variance, its degrees of freedom Satterthwaite's, the moderated part's no
    more than the trend at its size is worth (verdict.inference.moderated_df). A case whose
    own residual variance is beyond its prior's (p < UNUSUAL, an F test, the prior
    fitted without it: left_out_p) keeps its own, on its own degrees of freedom: its
    variance and its t quantile come from the same evidence; the prior is then fitted
    without it (_prior). The launches' common effects weigh each size by its precision
    (the inverse of its moderated variance, its own where unusual): equal weights gave
    a noisy size's noise to every quiet size as a launch effect (sd 0.040 for a true
    0.020: an independent review)."""
    cases, k = table.shape
    if cases < MIN_POOLED_CASES or k < 2:
        return [case_spread(row) for row in table]
    df = (k - 1) * (cases - 1) / cases  # of one case's residual sum of squares
    x = None if sizes is None else log_size(sizes)
    centred = table - table.mean(axis=1, keepdims=True)
    weights = np.ones(cases)
    for _ in range(2):  # equal weights, then each size's by its precision
        launch_effects = weights @ centred / weights.sum()
        residual = centred - launch_effects
        own = np.maximum(np.sum(residual ** 2, axis=1) / df, 1e-12)
        unusual = left_out_p(own, df, x)
        usual = unusual >= UNUSUAL
        if usual.sum() < MIN_POOLED_CASES:
            usual[:] = True
        prior_var, prior_df, worth = _prior(own, df, x, usual)  # Smyth 2004
        if math.isinf(prior_df):
            moderated = prior_var
        else:
            moderated = (prior_df * prior_var + df * own) / (prior_df + df)
        weights = 1 / np.where(usual, np.fmax(moderated, own), own)
    common = float(np.sum(launch_effects ** 2)) / (k - 1)  # mean square of launches / S
    # no more degrees of freedom than the trend at the case's size is worth
    mod_df = moderated_df(prior_df, df, worth)
    share = 1 - 1 / cases  # of one size's residual, the rest is in the launch effects
    spreads = []
    for v, o, p, v_df in zip(moderated, own, unusual, mod_df):
        var, var_df = (o, df) if p < UNUSUAL else (v, v_df)
        spreads.append(Spread(common + share * var,
                              satterthwaite([(common, k - 1), (share * var, var_df)]), p))
    return spreads


def _prior(own: np.ndarray, df: float, x: np.ndarray | None,
           usual: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """trend_prior of the usual cases' variances alone, read at every case's size: a
    size far noisier than the rest neither bends the trend nor, through the spread of
    the log variances about it, lowers every other size's prior weight (robust
    hyperparameters: B. Phipson et al., "Robust hyperparameter estimation protects
    against hypervariable genes", Ann. Appl. Stat. 10(2), 2016)."""
    prior_var, prior_df, worth = trend_prior(own[usual], np.full(int(usual.sum()), df),
                                             None if x is None else x[usual])
    if usual.all():
        return prior_var, prior_df, worth
    if x is None:
        return np.full(own.size, prior_var[0]), prior_df, np.full(own.size, worth[0])
    order = np.argsort(x[usual])
    at = x[usual][order]
    return (np.exp(np.interp(x, at, np.log(prior_var)[order])), prior_df,
            np.interp(x, at, worth[order]))


def left_out_p(own: np.ndarray, df: float, x: np.ndarray | None) -> np.ndarray:
    """Each case's p-value for "its residual variance no larger than the others' trend at
    its size" (unusual_p), the trend fitted without it: a noisy size at an end of the
    range otherwise bends the trend (a step of 3 sizes) towards itself and passes as
    usual. The trend at a size left out is read between the fitted values of its
    neighbours (a constant, line or step: exact within the range, the nearest end's value
    beyond it)."""
    n = own.size
    out = np.ones(n)
    dfs = np.full(n - 1, df)
    for i in range(n):
        rest = np.arange(n) != i
        if x is None:
            prior_var, prior_df, _ = trend_prior(own[rest], dfs, None)
            at = float(prior_var[0])
        else:
            prior_var, prior_df, _ = trend_prior(own[rest], dfs, x[rest])
            order = np.argsort(x[rest])
            at = float(np.exp(np.interp(x[i], x[rest][order], np.log(prior_var)[order])))
        out[i] = float(unusual_p(own[i:i + 1], df, at, prior_df)[0])
    return out


def launches_needed(pilot: Spread, precision: float, past: History | None = None,
                    ratio: CommandRatio | None = None, first: int = PILOT) -> int:
    """Stein's launch count: the fewest launches that bring the interval within
    +-precision of the median, from the pilot's spread s0^2 (of its `first` launches)
    and the command term (command_term: learned, or s0^2 assumed):
    t^2 (s0^2 / K + sigma^2) <= log(1 + precision)^2. Where even MAX_LAUNCHES cannot,
    the command term dominates and more launches of this command would not help: the
    pilot's."""
    for k in range(first, MAX_LAUNCHES + 1):
        if half_width(pilot.var, pilot.df, k, past, ratio)[0] <= math.log1p(precision):
            return k
    return first


@dataclass(frozen=True)
class Launch:
    """One launch of a case: its median latency and the median's log-scale variance."""
    median_s: float
    log_var: float  # variance of log(median), from its order-statistic CI


def launch(latency_s: np.ndarray) -> Launch:
    """A launch from its latencies; without a CI (n < 6) the variance is of the range."""
    ordered = np.sort(latency_s)
    half = ordered.size // 2  # the median of sorted samples, without sorting them again
    median = float(ordered[half] if ordered.size % 2 else (ordered[half - 1] + ordered[half]) / 2)
    ci = median_ci(ordered, LEVEL, presorted=True)
    low, high = ci if ci else (float(ordered[0]), float(ordered[-1]))
    # The order-statistic CI of the median is asymptotically median +- z se (Le Boudec
    # 2010, Thm 2.1); on the log scale se(log m) = se(m) / m.
    se = (math.log(high) - math.log(low)) / (2 * Z) if low > 0 else 0.0
    return Launch(median, se * se)


@dataclass(frozen=True)
class History:
    """A case's variance components from other commands' launches of it (log scale)."""
    between_var: float  # tau^2: between launches of one command
    df: int
    launches: int
    command_var: float | None = None  # sigma^2: between commands; None: too few commands
    command_df: int = 0
    commands: int = 0
    levels: tuple | None = None  # two regimes of the commands' medians (regimes)
    means_var: float | None = None  # the variance of the commands' means (two or more)
    inverse_n: float = 1.0  # the mean of 1 / (a command's launches)
    level: str | None = None  # "lower" or "higher": the history kept to this command's level
    command_means: tuple[float, ...] = ()  # each command's mean log median (none stalled)
    means_df: int = 0  # of means_var: the commands kept less one a level
    # each command's side of a step in time (step), 0 before and 1 after; for a run's own
    # figure in states that alternate, its level (history)
    stretches: tuple = ()

    def state_span(self) -> float:
        """How far apart the commands' means lie within a stretch (the widest): the
        differences between states this configuration has shown with nothing changed."""
        means, part = np.asarray(self.command_means), np.asarray(self.stretches or
                                                                  [0] * len(self.command_means))
        return max((float(np.ptp(means[part == s])) for s in set(part.tolist())
                    if np.sum(part == s) >= 2), default=0.0)


def history(groups: list[list[float]], centre: float | None = None) -> History | None:
    """The variance components of log launch medians grouped by command (one-way ANOVA),
    the groups in command order: tau^2 the pooled variance within the commands of two or
    more launches; sigma^2 the variance of the commands' means less their launches'
    share, tau^2 times the mean of 1/n (at least 0), on MIN_HISTORY_DF degrees of freedom
    or more. None below MIN_HISTORY_DF degrees of freedom for tau^2. Learned from every
    earlier command (a launch stalled in one adds nothing: robust_groups), none left out:
    on a machine whose commands land in states, the states are the spread between
    commands (an outlier test that left out the command in the other state, and a split
    into levels that kept only the spread within them, made a false regression of 6-28%
    of compares under the recorded noise: bench/history.py). Only a step in time, the
    commands before and after a change point in command order (step), is learned
    apart, so a results file with a regression in it does not count the regression as
    noise; levels that alternate are states, and are named (`levels`, regimes).
    `centre`: this command's mean log median, which says the level it is in; given (a
    run's own figure, not a comparison's), sigma^2 of alternating levels is the spread
    within each, so the run's interval is that of its state, the states named beside it
    (one interval across states 1.6x apart had a half-width of 88%: issue 62)."""
    logs = robust_groups([np.log(g) for g in groups if len(g)])
    stalled = stalled_commands(logs)
    logs = [g for i, g in enumerate(logs) if i not in stalled]
    several = [g for g in logs if g.size >= 2]
    df = sum(g.size - 1 for g in several)
    if df < MIN_HISTORY_DF:
        return None
    tau2 = sum(float(np.sum((g - g.mean()) ** 2)) for g in several) / df
    sizes = np.array([g.size for g in logs])
    means = np.array([g.mean() for g in logs])
    floor = tau2 * float(np.mean(1 / sizes))  # what launches alone spread a mean by
    levels, regime = regimes(means, floor)
    part = step(means, floor)
    level = None
    if levels is not None and centre is not None:
        split = math.log(math.sqrt(levels[0][0] * levels[1][0]))
        level = "higher" if centre > split else "lower"
        if not part.any():  # states that alternate: this command's figure is its state's
            part = regime
    inverse_n = float(np.mean(1 / sizes))
    means_var, means_df, sigma2 = _about_levels(means, part, tau2 * inverse_n)
    return History(tau2, df, int(sizes.sum()), sigma2, means_df if sigma2 is not None else 0,
                   int(sizes.size), levels, means_var, inverse_n, level,
                   tuple(map(float, means)), max(means_df, 0), tuple(part.tolist()))


def stalled_commands(logs: list[np.ndarray]) -> set[int]:
    """The commands whose mean lies STALL_GAP (4x) or more from the median of all the
    commands' means, a strict minority: a command stalled as a whole, or a change made once
    and undone (a delay injected for one run), as states.py names a stalled launch. The
    machine's states here lie 1.1-3x apart and stay in (bench/data/noise.json)."""
    means = np.array([g.mean() for g in logs])
    if means.size < 3:
        return set()
    far = np.abs(means - np.median(means)) >= STALL_GAP
    return set(np.flatnonzero(far).tolist()) if 2 * far.sum() < means.size else set()


def step(means: np.ndarray, floor: float = 0.0) -> np.ndarray:
    """Each command's stretch, 0 before and 1 after a change point in command order: the
    split, MIN_LEVEL_COMMANDS or more each side, whose difference of means is largest
    against the spread within the two stretches (at least `floor`), where it is beyond
    what commands alike reach even when sorted (level_critical: a stricter bar than the
    order alone needs). All 0 where there is none."""
    part = np.zeros(means.size, dtype=int)
    if means.size < 2 * MIN_LEVEL_COMMANDS:
        return part
    cuts = np.arange(MIN_LEVEL_COMMANDS, means.size - MIN_LEVEL_COMMANDS + 1)
    ratios = []
    for c in cuts:
        a, b = means[:c], means[c:]
        within = (np.sum((a - a.mean()) ** 2) + np.sum((b - b.mean()) ** 2)) / (means.size - 2)
        within = max(float(within), floor)
        gap = abs(b.mean() - a.mean())
        ratios.append(gap / math.sqrt(within) if within > 0 else math.inf if gap else 0.0)
    best = int(np.argmax(ratios))
    if ratios[best] > level_critical(means.size):
        part[cuts[best]:] = 1
    return part


def _about_levels(means: np.ndarray, part: np.ndarray,
                  share: float) -> tuple[float | None, int, float | None]:
    """The variance of commands' means about their level's mean (`part`: each one's
    level), on the commands less one a level, and sigma^2, that variance less the
    launches' `share` (at least 0) on MIN_HISTORY_DF degrees of freedom or more."""
    sides = np.unique(part)
    centred = means - np.array([means[part == side].mean() for side in sides])[
        np.searchsorted(sides, part)]
    means_df = means.size - sides.size
    means_var = float(np.sum(centred ** 2)) / means_df if means_df >= 1 else None
    sigma2 = max(means_var - share, 0.0) if means_df >= MIN_HISTORY_DF else None
    return means_var, means_df, sigma2


def robust_groups(logs: list[np.ndarray]) -> list[np.ndarray]:
    """Earlier commands' log launch medians (one array a command) as the history learns
    from them: in each, the launches a run's figures leave out as stalled (states.stalls)
    dropped, so that a stalled launch of an earlier command cannot widen the next
    command's interval. (Dropping besides the command whose launches spread most, by an
    F test against the others at p < 0.001, lowered the corpus's coverage by 1.5-2.5
    points in bench/coverage.py: left out.)"""
    return [np.delete(g, [o.launch for o in stalls(dict(enumerate(g)))]) for g in logs]


@dataclass(frozen=True)
class CommandRatio:
    """How much the commands of a run's cases differ against how much their launches do,
    learned from their earlier commands on the same hosts with the same MPI (one-way
    random-effects model, Searle, Casella & McCulloch 1992, 3.5: a case's command means
    vary as sigma^2 + tau^2 / n = tau^2 (r + 1/n), r = sigma^2 / tau^2 common to the
    cases): `pooled` R = sum df_i V_i / sum df_i tau_i^2, which estimates r + h (V_i the
    variance of case i's command means on df_i = commands - 1), `share` h (the weighted
    mean of 1/n), and R's relative variance 2 / df_b + 2 / df_w (the delta method for a
    ratio of two sums of squares on df_b and df_w degrees of freedom)."""
    pooled: float
    share: float
    rel_var: float
    df: int  # df_b: the degrees of freedom between commands it pools

    @property
    def ratio(self) -> float:
        """r = sigma^2 / tau^2, at least 0."""
        return max(self.pooled - self.share, 0.0)


def command_ratios(histories: list[History | None], sizes) -> list[CommandRatio | None]:
    """Each case's ratio, pooled over the run's cases whose history holds two or more
    earlier commands (CommandRatio): borrowed across the cases, as their launch variances
    are (run_spreads), since one case's two earlier commands say little and a run's
    dozens of cases much. Pooled apart on each side of a step in the cases' log V_i /
    tau_i^2 over message size, where the BIC finds one (verdict.inference.step_at): commands
    need not vary in proportion to launches at every size (on this host 11 times the
    launches' variance at 8 B ping-pong, 1.6 times from 4 KiB: docs/statistics.md). None
    where a side has fewer than MIN_HISTORY_DF degrees of freedom between commands."""
    x = log_size(sizes)
    # a launch variance at the rounding of identical medians (a timer's quantised 8 B
    # latency) is no spread: a ratio over it would be one of rounding errors
    used = [i for i, h in enumerate(histories) if h is not None and h.means_var is not None
            and h.means_var > NO_SPREAD and h.between_var > NO_SPREAD]
    split = step_at(np.log([histories[i].means_var / histories[i].between_var for i in used]),
                    x[used]) if used else None
    side = (x > split) if split is not None else np.zeros(x.size, dtype=bool)
    ratio = {s: _pooled([histories[i] for i in used if side[i] == s]) for s in set(side)}
    return [ratio[s] for s in side]


def _pooled(used: list[History]) -> CommandRatio | None:
    """CommandRatio over these cases' histories (two or more commands each)."""
    df_b = sum(h.means_df for h in used)
    if df_b < MIN_HISTORY_DF:
        return None
    launch = sum(h.means_df * h.between_var for h in used)  # > 0: above NO_SPREAD
    return CommandRatio(sum(h.means_df * h.means_var for h in used) / launch,
                        sum(h.means_df * h.between_var * h.inverse_n for h in used)
                        / launch, 2 / df_b + 2 / sum(h.df for h in used), df_b)


LEVEL_GAP = STATE_GAP  # a side this far from every earlier command: another state
MIN_LEVEL_COMMANDS = 2
LEVEL_TEST = 0.01  # the chance of two levels in commands alike (regimes)


def regimes(means: np.ndarray, floor: float = 0.0) -> tuple[tuple | None, np.ndarray | None]:
    """Two levels in the commands' mean log medians: the split of the sorted means, with
    MIN_LEVEL_COMMANDS or more on each side, whose gap is widest against the spread
    within the two sides (their pooled variance, at least `floor`, the launches' share),
    where that ratio is beyond what commands alike reach at LEVEL_TEST (level_critical);
    (((median, commands) low, (median, commands) high), each command's side, 0 or 1), or
    (None, None). A machine that switches between two states (here: 8 B ping-pong at 0.11
    or 0.37 us, with the VM's placement on its host) shows so, and so does a results file
    that holds a real change; no single interval describes either well."""
    n = means.size
    if n < 2 * MIN_LEVEL_COMMANDS:
        return None, None
    order = np.argsort(means)
    ratio, at = _widest_gap(means[order][None, :], floor)
    if ratio[0] <= level_critical(n):
        return None, None
    part = np.zeros(n, dtype=int)
    part[order[at[0]:]] = 1
    low, high = means[part == 0], means[part == 1]
    return (((math.exp(float(np.median(low))), low.size),
             (math.exp(float(np.median(high))), high.size)), part)


def _widest_gap(ordered: np.ndarray, floor: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """For each row of sorted means: the largest gap over the pooled standard deviation of
    the two sides it splits them into, and the index of the first mean above it."""
    rows, n = ordered.shape
    cuts = np.arange(MIN_LEVEL_COMMANDS, n - MIN_LEVEL_COMMANDS + 1)
    total, square = np.cumsum(ordered, axis=1), np.cumsum(ordered ** 2, axis=1)

    def ss(upto):  # sums of squares of the first `upto` and of the rest
        a = square[:, upto - 1] - total[:, upto - 1] ** 2 / upto
        rest_sum, rest_sq = total[:, -1] - total[:, upto - 1], square[:, -1] - square[:, upto - 1]
        return a + rest_sq - rest_sum ** 2 / (n - upto)
    within = np.stack([np.maximum(ss(c) / (n - 2), floor) for c in cuts], axis=1)
    gaps = ordered[:, cuts] - ordered[:, cuts - 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(within > 0, gaps / np.sqrt(within), np.where(gaps > 0, np.inf, 0.0))
    best = np.argmax(ratios, axis=1)
    return ratios[np.arange(rows), best], cuts[best]


@functools.lru_cache(maxsize=None)
def level_critical(n: int, draws: int = 20000) -> float:
    """The 1 - LEVEL_TEST quantile of regimes' ratio among n commands alike (normal
    means), simulated once a count (seeded, so the same every time): its distribution
    depends only on n (4 commands reach 15 at 1%, 30 commands 1.6)."""
    rng = np.random.default_rng(n)
    ratio, _ = _widest_gap(np.sort(rng.standard_normal((draws, n)), axis=1))
    return float(np.quantile(ratio, 1 - LEVEL_TEST))


@dataclass(frozen=True)
class Interval:
    """A case's launch-aware figures; times in seconds."""
    launches: int
    median_s: float
    ci_low_s: float | None
    ci_high_s: float | None
    basis: str  # "launches", "launches+history", "history" (one launch), "one launch"
    between_cv: float | None  # sqrt(exp(tau^2) - 1): launch-to-launch spread
    within_cv: float | None  # the same of a launch median's own error
    dominant: str | None  # "between" or "within": the larger variance component
    launch_medians_s: tuple[float, ...] = ()
    command_cv: float | None = None  # the same of sigma^2; from history or assumed
    command_basis: str | None = None  # "host", "history" or "assumed" (command_term)
    # where the interval would be wider than MAX_SPAN: no interval, and the launches'
    # medians in groups instead (disagreement)
    disagree: tuple[tuple[float, float, int], ...] | None = None

    @property
    def precision(self) -> float | None:
        """How far the interval reaches from the median, relative to it."""
        if self.ci_low_s is None or self.median_s <= 0:
            return None
        return max(self.median_s - self.ci_low_s, self.ci_high_s - self.median_s) / self.median_s


MAX_LOG_VAR = 700.0  # exp() of more overflows a double: a CV beyond any measurement


def _cv(log_var: float | None) -> float | None:
    return None if log_var is None else math.sqrt(math.expm1(min(max(log_var, 0.0),
                                                                 MAX_LOG_VAR)))


def command_term(s2: float, df: float, past: History | None) -> tuple[float, float, str]:
    """sigma^2 with its degrees of freedom and basis, where no ratio was learned: the
    case's own history's ("history"), else s^2 assumed (COMMAND_TO_LAUNCH, "assumed"),
    which shares s^2's degrees of freedom."""
    if past is not None and past.command_var is not None:
        return past.command_var, float(past.command_df), "history"
    return COMMAND_TO_LAUNCH * s2, df, "assumed"


def _learned(s2: float, df: float, k: float, past: History | None,
             ratio: CommandRatio) -> tuple[float, float, float]:
    """The variance of k launches' mean log median where the ratio was learned, its
    degrees of freedom and its sigma^2: v (r + 1/k), v the launches' variance of this
    command and of its history pooled (df_v), its relative variance 2 / df_v plus R's
    scaled by (R / (r + 1/k))^2 (the delta method; a product's relative variances add)."""
    v, df_v = s2, df
    if past is not None:
        v, df_v = (df * s2 + past.df * past.between_var) / (df + past.df), df + past.df
    factor = ratio.ratio + 1 / k
    rel = 2 / df_v + ratio.rel_var * (ratio.pooled / factor) ** 2
    return v * factor, 2 / rel, v * ratio.ratio


def _pools_more(ratio: CommandRatio | None, past: History | None) -> bool:
    return ratio is not None and (past is None or ratio.df > past.command_df)


def half_width(s2: float, df: float, k: int, past: History | None,
               ratio: CommandRatio | None = None) -> tuple[float, float, str]:
    """The interval's reach on the log scale for k launches of variance s2 (df), with
    sigma^2 and its basis: learned from the run's cases' history on these hosts
    ("host": _learned) where that pools more commands than the case's own history,
    else command_term's. Assumed, the ratio is exactly t(df); from a case's history, its
    degrees of freedom are Satterthwaite's."""
    if _pools_more(ratio, past):
        var, var_df, sigma2 = _learned(s2, df, k, past, ratio)
        return float(t_quantile(var_df)) * math.sqrt(var), sigma2, "host"
    sigma2, sigma_df, how = command_term(s2, df, past)
    if how == "history":
        df = satterthwaite([(s2 / k, df), (sigma2, sigma_df)])
    return float(t_quantile(df)) * math.sqrt(s2 / k + sigma2), sigma2, how


MAX_SPAN = 10.0  # high over low: an interval wider than x/10 is no figure to act on


def disagreement(medians) -> tuple[tuple[float, float, int], ...]:
    """The launch medians in groups split where neighbours lie states.STATE_GAP (the gap
    of another state) or more apart: (lowest, highest, launches) each."""
    ordered = sorted(m for m in medians if m > 0)
    groups, start = [], 0
    for i in range(1, len(ordered) + 1):
        if i == len(ordered) or math.log(ordered[i] / ordered[i - 1]) >= STATE_GAP:
            groups.append((ordered[start], ordered[i - 1], i - start))
            start = i
    return tuple(groups)


def supported(iv: Interval) -> Interval:
    """The interval, or where it is wider than MAX_SPAN (high over low) none: the launches
    disagree more than any interval of them could say, and their groups say it instead
    (one launch: its samples, the interval's own ends, one group)."""
    if iv.ci_low_s is None or iv.ci_low_s > 0 and iv.ci_high_s / iv.ci_low_s <= MAX_SPAN:
        return iv
    groups = disagreement(iv.launch_medians_s) if iv.launches > 1 else \
        ((iv.ci_low_s, iv.ci_high_s, 1),)
    return replace(iv, ci_low_s=None, ci_high_s=None, disagree=groups)


def interval(launches: list[Launch], within_ci: tuple[float, float] | None = None,
             past: History | None = None, pilot: int | None = None,
             given: Spread | None = None, ratio: CommandRatio | None = None,
             cap: bool = True) -> Interval:
    """The launch-aware interval of a case's launches, in launch order; `pilot`: how many
    first launches chose the launch count (Stein's interval); `past`: the case's history;
    `given`: its spread from all the run's cases (run_spreads), else its own launches';
    `ratio`: how much commands differ here (command_ratios). With one launch, its
    within-launch CI (`within_ci`) unless the history has tau^2. Never wider than
    MAX_SPAN (supported), unless `cap` is False (a simulation's coverage is that of the
    interval itself)."""
    found = _interval(launches, within_ci, past, pilot, given, ratio)
    return supported(found) if cap else found


def _interval(launches, within_ci, past, pilot, given, ratio) -> Interval:
    y = np.log([lc.median_s for lc in launches])
    within = float(np.mean([lc.log_var for lc in launches]))
    k = y.size
    medians = tuple(lc.median_s for lc in launches)
    if k >= 2:
        mean = float(y.mean())
        s = given or case_spread(y, pilot)
        s2 = s.var
        half, sigma2, how = half_width(s2, s.df, k, past, ratio)
        tau2 = max(0.0, s2 - within)
        return Interval(k, math.exp(mean), math.exp(mean - half), math.exp(mean + half),
                        "launches" if how == "assumed" else "launches+history", _cv(tau2),
                        _cv(within), _dominant(tau2, within), medians, _cv(sigma2), how)
    median = launches[0].median_s
    if past is not None:
        if _pools_more(ratio, past):
            var, df, sigma2 = _learned(past.between_var, past.df, 1, None, ratio)
            how = "host"
        else:
            sigma2, sigma_df, how = command_term(past.between_var, past.df, past)
            var = past.between_var + sigma2
            df = satterthwaite([(past.between_var, past.df), (sigma2, sigma_df)]) \
                if how == "history" else past.df
        half = float(t_quantile(df)) * math.sqrt(var + within)
        return Interval(1, median, median * math.exp(-half), median * math.exp(half), "history",
                        _cv(past.between_var), _cv(within),
                        _dominant(past.between_var, within), medians, _cv(sigma2), how)
    low, high = within_ci if within_ci else (None, None)
    return Interval(1, median, low, high, "one launch", None, _cv(within), None, medians)


def _dominant(between: float, within: float) -> str:
    return "between" if between > within else "within"
