"""The statistics of every verdict, on log ratios of launch medians (the launch is the
unit: CONTRIBUTING.md).

An Estimate is one comparison: the log of one side's time over the other's, the variance
of one unit of it (a launch's ratio, or a launch median where the sides were measured
apart), its degrees of freedom, and how that variance scales to the estimate's. Verdicts
of one family are then decided together (`decide`):

- over: H0 log ratio = the threshold's bound, two-sided t read in its direction (violated,
  regression, named);
- under: H0 log ratio >= the bound (holds, cleared), or with `equivalence` also H0 log
  ratio <= -bound, two one-sided tests (no change; Schuirmann 1987);
- apart: H0 log ratio = 0, two-sided (faster: significant; slower: significant, and
  within the bound by `under`, else undetermined);

each adjusted by Benjamini-Hochberg over the family. `over` is the two-sided test of d =
bound read in its direction (p twice the one-sided one): what it names carries the
two-sided false-coverage-rate interval at 1 - R alpha / m (Benjamini & Yekutieli, JASA
100, 2005: R named of m), whose end on the threshold's side is then the bound the test
passed, so a named interval never holds the threshold and covers at the level its header
states (each end at 1 - R alpha / m, one-sided, missed the truth in 7.9-9.3% of families
named whole: an independent review). Every other claim carries its plain 1 - alpha
interval.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from ..stats import ALPHA, benjamini_hochberg, satterthwaite, t_cdf, t_quantile
from .threshold import POWER

MIN_MODERATED = 3  # fewer comparisons cannot estimate a prior's spread
# sigma^2 / tau^2 without history: commands differ as much as a command's launches
# (measured here: pingpong 0.9, bw 0.1-0.5; docs/statistics.md).
COMMAND_TO_LAUNCH = 1.0
# A log ratio's variance below this is the rounding of identical launches (sd 1e-10 against
# 1e-16 of a double's), not a measured spread: no spread at all, which is unknown spread.
NO_SPREAD = 1e-20


@dataclass(frozen=True)
class Estimate:
    """log_ratio: the bad side's time over the other's, on the log scale; its variance is
    var * scale + extra, var the launches' (df degrees of freedom, 0: unknown) and extra
    a term measured apart (the commands': 2 sigma^2) of extra_df degrees of freedom."""
    log_ratio: float
    var: float
    df: float
    scale: float
    launches: int
    paired: bool
    extra: float = 0.0
    extra_df: float = math.inf

    @property
    def se(self) -> float:
        return math.sqrt(self.var * self.scale + self.extra) if self.df else math.nan

    @property
    def test_df(self) -> float:
        """Satterthwaite's degrees of freedom of var * scale + extra (1946)."""
        if not self.extra or not self.df:
            return self.df
        return satterthwaite([(self.var * self.scale, self.df), (self.extra, self.extra_df)])


def paired(left: dict, right: dict,
           command: tuple[float, float] | None = None) -> Estimate:
    """Left over right, launch by launch where they share launches (a launch slow as a
    whole cancels out); sides measured apart are two commands: unpaired(), with the
    variance between commands and its degrees of freedom `command` where a history gave
    it."""
    common = sorted(set(left) & set(right))
    if not common:
        return unpaired(np.log(list(right.values())), np.log(list(left.values())), None,
                        *(command or (None,)))
    d = np.log([left[k] / right[k] for k in common])
    var = float(d.var(ddof=1)) if d.size > 1 else math.nan
    return Estimate(float(d.mean()), var, d.size - 1, 1 / d.size, d.size, True)


def unpaired(a: np.ndarray, b: np.ndarray, launch: tuple[float, float] | None = None,
             command_var: float | None = None, command_df: float = math.inf) -> Estimate:
    """B over A from two commands' log launch medians. The launches' variance is `launch`
    (variance, df) where the caller knows it better (from all of a run's cases, or the
    history's), else pooled over the sides of two or more launches. Each side is one
    command, so the shift also carries twice the variance between commands:
    `command_var` from the history, else assumed as large as the launches' (with their
    degrees of freedom)."""
    shift = float(np.mean(b) - np.mean(a))
    sides = [s for s in (a, b) if s.size >= 2]
    if launch is None and sides:
        df = sum(s.size - 1 for s in sides)
        launch = (sum(float(np.sum((s - s.mean()) ** 2)) for s in sides) / df, df)
    if launch is None or not launch[1]:
        return Estimate(shift, math.nan, 0, 0.0, min(a.size, b.size), False)
    var, df = launch
    scale = 1 / a.size + 1 / b.size
    if command_var is None:  # assumed in proportion to the launches' variance
        return Estimate(shift, var, df, scale + 2 * COMMAND_TO_LAUNCH, min(a.size, b.size),
                        False)
    return Estimate(shift, var, df, scale, min(a.size, b.size), False, 2 * command_var,
                    command_df)


def mean_interval(values, alpha: float = ALPHA) -> tuple[float, tuple[float, float] | None]:
    """The mean of one figure measured once per launch (not a ratio: a skew sensitivity,
    which can be 0 or below) and its two-sided 1 - alpha t interval over the launches;
    None with fewer than 2 launches, or none of their spread."""
    v = np.asarray(values, dtype=float)
    mean = float(v.mean())
    if v.size < 2 or v.var(ddof=1) <= NO_SPREAD:
        return mean, None
    half = float(t_quantile(np.array(v.size - 1.0), 1 - alpha / 2)) * math.sqrt(
        v.var(ddof=1) / v.size)
    return mean, (mean - half, mean + half)


def prior(var: np.ndarray, df: np.ndarray) -> tuple[float, float]:
    """The scaled inverse chi-square distribution that variances `var` (each of its `df`)
    are drawn from, by moments of log var (G. K. Smyth, Stat. Appl. Genet. Mol. Biol.
    3(1), 2004, section 6.2, with unequal degrees of freedom): its scale s0^2 and degrees
    of freedom d0, infinite where the variances agree within their own error."""
    scale, d0, _ = trend_prior(var, df, None)
    return float(scale[0]), d0


MIN_TREND = 8  # fewer variances: one scale for all of them
MIN_SIDE = 3  # a step in the trend has at least this many variances on each side


def trend_prior(var: np.ndarray, df: np.ndarray,
                x: np.ndarray | None) -> tuple[np.ndarray, float, np.ndarray]:
    """`prior` where the scale follows a covariate x (a message size's log): each
    variance's s0^2, the common d0, and the degrees of freedom each s0^2 is worth (a
    variance whose log is as uncertain as the fitted trend's there: 2 trigamma^-1 of
    the residual variance of the log variances about the trend times the fit's
    leverage at that x). The trend of log var over x is the one of a constant, a line,
    or a step between two constants at any x with MIN_SIDE variances on each side,
    chosen by the BIC (a protocol switch is a step, a smooth rise with size a line;
    Smyth's moments then measure the spread about it, as limma's trend does: C. W. Law
    et al., Genome Biol. 15, 2014, R29)."""
    from scipy.special import digamma, polygamma
    var, df = np.asarray(var, dtype=float), np.asarray(df, dtype=float)
    e = np.log(var) - digamma(df / 2) + np.log(df / 2)
    fitted, params, leverage, _ = _trend(e, x)
    about = float(np.sum((e - fitted) ** 2)) / max(e.size - params, 1)
    levels, at = np.unique(leverage, return_inverse=True)  # one for a constant's n variances
    worth = np.array([2 * trigamma_inverse(about * lev) if about * lev > 0 else math.inf
                      for lev in levels])[at]
    excess = about - float(np.mean(polygamma(1, df / 2)))
    if excess <= 0:
        return np.exp(fitted), math.inf, worth
    d0 = 2 * trigamma_inverse(excess)
    return np.exp(fitted + float(digamma(d0 / 2)) - math.log(d0 / 2)), d0, worth


def moderated_df(prior_df: float, df, worth) -> np.ndarray:
    """The degrees of freedom of (d0 s0^2 + d s^2) / (d0 + d) where s0^2 is itself an
    estimate worth `worth` degrees of freedom: Smyth's d0 + d, less the prior's weight
    w = d0 / (d0 + d) of its uncertainty (1/df = 1/(d0 + d) + w^2 / worth); `worth`
    alone where d0 is infinite."""
    df = np.asarray(df, dtype=float)
    if math.isinf(prior_df):
        return np.asarray(worth, dtype=float)
    w = prior_df / (prior_df + df)
    return 1 / (1 / (prior_df + df) + w ** 2 / np.asarray(worth, dtype=float))


def _trend(e: np.ndarray, x: np.ndarray | None,
           line: bool = True) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    """The fitted values of e over x, their parameter count (a step's place counted as
    one), each fitted value's leverage and its part (0, or 1 above a step), the BIC's
    choice among a constant, a line (unless `line` is False) and a step."""
    n = e.size
    one = np.zeros(n, dtype=int)
    fits = [(np.full(n, e.mean()), 1, np.full(n, 1 / n), one)]
    if x is not None and n >= MIN_TREND and np.ptp(x) > 0:
        x = np.asarray(x, dtype=float)
        if line:
            slope, icept = np.polyfit(x, e, 1)
            centred = x - x.mean()
            fits.append((icept + slope * x, 2, 1 / n + centred ** 2 / np.sum(centred ** 2),
                         one))
        xs = np.sort(x)
        for at in range(MIN_SIDE, n - MIN_SIDE + 1):
            if xs[at] == xs[at - 1]:  # a step falls between sizes, never inside one
                continue
            low = x <= xs[at - 1]
            fits.append((np.where(low, e[low].mean(), e[~low].mean()), 3,
                         np.where(low, 1 / low.sum(), 1 / (n - low.sum())),
                         (~low).astype(int)))

    def bic(fit):
        rss = max(float(np.sum((e - fit[0]) ** 2)), 1e-300)
        return n * math.log(rss / n) + fit[1] * math.log(n)
    return min(fits, key=bic)


def step_at(e: np.ndarray, x: np.ndarray) -> float | None:
    """The x after which e steps, where the BIC prefers a step between two constants to
    one constant (the largest x below the step), else None."""
    x = np.asarray(x, dtype=float)
    part = _trend(np.asarray(e, dtype=float), x, line=False)[3]
    return float(x[part == 0].max()) if part.any() else None


def trigamma_inverse(x: float) -> float:
    """y with trigamma(y) = x: Newton's method on 1 / trigamma(y) = 1 / x, nearly linear
    in y (trigamma(y) ~ 1/y + 1/(2y^2)), from y = 1/2 + 1/x."""
    from scipy.special import polygamma
    if x > 1e7:
        return 1 / math.sqrt(x)
    if x < 1e-6:
        return 1 / x
    y = 0.5 + 1 / x
    for _ in range(50):
        tri = float(polygamma(1, y))
        step = tri * (1 - tri / x) / float(polygamma(2, y))
        y += step
        if abs(step) / y < 1e-8:
            break
    return y


# A variance beyond its prior's below this p-value (1% of comparisons whose variances are
# alike): a run's case keeps its own variance and is flagged (replication.run_spreads).
UNUSUAL = 0.01


def unusual_p(own: np.ndarray, df, prior_var, prior_df: float) -> np.ndarray:
    """Each variance's p-value for "no larger than its prior's": own / prior is F(df, d0)
    under it (chi2/df where d0 is infinite), so among variances alike 1% fall below 0.01."""
    from scipy.special import chdtrc, fdtrc
    ratio = np.asarray(own, dtype=float) / prior_var
    if math.isinf(prior_df):
        return chdtrc(df, df * ratio)
    return fdtrc(df, prior_df, ratio)


def moderated(var: np.ndarray, df: np.ndarray, keep_own: bool = True,
              given: tuple[float, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Launch variances (each of its df; NaN or below NO_SPREAD: no spread seen) moderated
    towards the prior all of them share, the prior's weight d0 estimated (Smyth 2004),
    never fixed: s~^2 = (d0 s0^2 + d s^2) / (d0 + d) on d0 + d degrees of freedom (at most
    all of theirs together). Never below its own variance: a comparison noisier than the
    rest is not pulled below what it showed (a run's intervals, which take the trend,
    keep their own only where it is beyond it: replication.run_spreads). No spread is
    unknown spread: it takes the prior's, and with no prior to take it stays 0 and its
    claim is inconclusive. With fewer than MIN_MODERATED
    known, each keeps its own. keep_own False: Smyth's posterior alone, for variances
    whose own estimates are too rough to floor anything (a case's few commands). `given`:
    a prior (s0^2, d0) measured apart, instead of the one these variances share."""
    var, df = np.asarray(var, dtype=float), np.asarray(df, dtype=float)
    own = np.where(np.nan_to_num(var) > NO_SPREAD, np.nan_to_num(var), 0.0)
    known = (df > 0) & (own > 0)
    if given is not None:
        s0, d0 = given
        out = (d0 * s0 + df * own) / (d0 + df)
        return np.where(df > 0, np.fmax(out, own), s0), df + d0
    if known.sum() < MIN_MODERATED:
        return own, df
    s0, d0 = prior(own[known], df[known])
    if math.isinf(d0):
        out = np.full(own.shape, s0)
    else:
        out = (d0 * s0 + df * own) / (d0 + df)
    return (np.where(df > 0, np.fmax(out, own) if keep_own else out, own),
            np.where(df > 0, np.minimum(df + d0, float(df[known].sum())), df))


def moderate(found: list[Estimate]) -> list[Estimate]:
    """The estimates with their launch variances moderated together (`moderated`)."""
    var, df = moderated(np.array([e.var for e in found]), np.array([e.df for e in found]))
    return [replace(e, var=float(v), df=float(d)) if e.df else e
            for e, v, d in zip(found, var, df)]


@dataclass(frozen=True)
class Family:
    """One family's tests, as arrays over its tested members: Benjamini-Hochberg-adjusted
    p of `over` (H0 d = bound, above it), `under` (H0 d >= bound; with equivalence also d <=
    -bound) and `apart` (H0 d = 0, two-sided); the half widths of the plain interval and of
    the interval that goes with each test's word (`fcr` over's, `within` under's, `moved`
    apart's: each test's false-coverage-rate interval of what it names, Benjamini &
    Yekutieli 2005, so a word and its interval never disagree) and of `undecided`'s, which
    holds a bound wherever neither over nor under names; the smallest ratio `over` detects
    with POWER; the cut d passed where named (Benjamini-Hochberg's step-up: raw p below R
    alpha / m)."""
    over: np.ndarray
    under: np.ndarray
    apart: np.ndarray
    plain: np.ndarray
    fcr: np.ndarray
    detectable: np.ndarray
    cut: np.ndarray
    within: np.ndarray
    moved: np.ndarray
    undecided: np.ndarray


def over_p(d: np.ndarray, se: np.ndarray, df: np.ndarray, bound: float) -> np.ndarray:
    """`over`'s raw p: the two-sided t test of d = bound, read in its direction."""
    return np.minimum(2 * t_cdf(df, -(d - bound) / se), 1.0)


def family_tests(d: np.ndarray, se: np.ndarray, df: np.ndarray, bound: float,
                equivalence: bool = False, alpha: float = ALPHA,
                over_alpha: float | None = None, next_alpha: float | None = None) -> Family:
    """d: log time ratios (the bad side's over the other's), se their standard errors on
    df degrees of freedom, all tested (se > 0); bound: the threshold's log time ratio;
    `over_alpha`: the level `over` names at, where the family was selected among others
    (selected_levels), else alpha; `next_alpha`: where the family was not selected
    (over_alpha 0), the level it would have named at had it been, which an undecided
    member's interval is drawn at.

    Each named member's interval is the one its test passed (BH's step-up names R of m
    where raw p <= R q / m, so the interval at that level excludes what was rejected), and
    an undecided member's is the wider of over's and under's at (R + 1) q / m, the level
    it would have needed: it missed both, so the interval reaches the bound on over's
    side and beyond it on under's."""
    over_alpha = alpha if over_alpha is None else over_alpha
    # adjusted to alpha's scale: named where below alpha, 1 in a family not selected
    over = np.minimum(benjamini_hochberg(over_p(d, se, df, bound)) * alpha
                      / max(over_alpha, 1e-300), 1.0)
    raw_under = t_cdf(df, (d - bound) / se)
    if equivalence:
        raw_under = np.maximum(raw_under, t_cdf(df, -(d + bound) / se))
    under = benjamini_hochberg(raw_under)
    apart = benjamini_hochberg(2 * t_cdf(df, -np.abs(d) / se))
    m = d.size

    def at(named: np.ndarray, level: float, sides: int) -> np.ndarray:
        """The half width at the FCR level of R named of m at `level` (R at least 1)."""
        r = max(int(np.sum(named)), 1)
        return t_quantile(df, 1 - min(r * level / m, 1.0) / sides) * se
    named_over, named_under = over < alpha, under < alpha
    fcr = at(named_over, over_alpha, 2)  # named: d less it is the cut's
    missed = next_alpha if over_alpha == 0 and next_alpha is not None else over_alpha
    undecided = np.maximum(
        t_quantile(df, 1 - min((np.sum(named_over) + 1) * missed / m, 1.0) / 2) * se,
        t_quantile(df, 1 - min((np.sum(named_under) + 1) * alpha / m, 1.0)) * se)
    return Family(over, under, apart, t_quantile(df, 1 - alpha / 2) * se, fcr,
                  np.exp(bound + (t_quantile(df, 1 - alpha / (2 * m))
                                  + t_quantile(df, POWER)) * se),
                  bound + fcr, at(named_under, alpha, 1), at(apart < alpha, alpha, 2),
                  np.maximum(undecided, t_quantile(df, 1 - alpha / 2) * se))


def selected_levels(found: list[Estimate], families: list[str], bound: float,
                    alpha: float = ALPHA) -> tuple[dict[str, float], float]:
    """The level `over` names at in each family where one command is the gate over many
    families (check --all's 40 guidelines, tune's collectives): the families are first
    selected, each by the Simes p of its members' `over` tests, Benjamini-Hochberg over the
    M families; within the R selected, `over` names at alpha R / M, and in the others
    names nothing (Benjamini & Bogomolov, "Selective inference on multiple families of
    hypotheses", J. R. Stat. Soc. B 76(1), 2014). Where every member of every family
    lies at the bound, a command then names falsely with chance alpha, not with one
    family's alpha per guideline (48-50% of commands at 20 families, an independent
    review). With the levels, alpha (R + 1) / M: what a family not selected would have
    needed, the level its members' intervals are drawn at (family_tests)."""
    names = list(dict.fromkeys(families))
    if not names:
        return {}, alpha
    tested = [i for i, e in enumerate(found) if _tested(e)]
    raw = over_p(*(np.array([getattr(found[i], a) for i in tested])
                   for a in ("log_ratio", "se", "test_df")), bound)
    simes = []
    for family in names:
        p = np.sort(raw[[j for j, i in enumerate(tested) if families[i] == family]])
        simes.append(float(np.min(p * p.size / np.arange(1, p.size + 1))) if p.size else 1.0)
    chosen = benjamini_hochberg(np.array(simes)) < alpha
    level = alpha * int(chosen.sum()) / len(names)
    return ({f: level if c else 0.0 for f, c in zip(names, chosen)},
            alpha * min(int(chosen.sum()) + 1, len(names)) / len(names))


def _tested(e: Estimate) -> bool:
    """An estimate the tests can judge: its spread known and above the rounding's."""
    return bool(e.df) and e.se ** 2 > NO_SPREAD


MAD_EFFICIENCY = 0.37  # of the median absolute deviation as a normal scale, against the SD


def empirical_null(d: np.ndarray, se: np.ndarray, df: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Standard errors and degrees of freedom widened to the spread the family's estimates
    show among themselves, where it is wider (Efron's empirical null, JASA 99, 2004): the
    estimates of a design whose members share their errors (a node's partners' fitted
    effects carry its own noise back to it) vary more than each one's own variance says.
    Most members are typical, so the scale is robust: 1.4826 times the median absolute
    deviation, worth MAD_EFFICIENCY of the members' degrees of freedom."""
    if d.size < MIN_MODERATED:
        return se, df
    scale = 1.4826 * float(np.median(np.abs(d - np.median(d))))
    typical = math.sqrt(float(np.mean(se ** 2)))
    if scale <= typical:
        return se, df
    return se * scale / typical, np.minimum(df, max(MAD_EFFICIENCY * (d.size - 1), 1.0))


@functools.lru_cache(maxsize=64)
def sequential_level(information: tuple[float, ...], alpha: float = ALPHA) -> float:
    """The one-sided level each look of a group-sequential test is held to, the same at
    every look (Pocock's boundary, Biometrika 64, 1977): looks at these amounts of
    information (launches), each look's statistic a sum's at that count over its standard
    deviation, so that under the hypothesis the chance of passing at any look is alpha.
    Bonferroni's alpha / looks is below it: the looks see mostly the same data."""
    from scipy.special import ndtr, ndtri
    info = np.asarray(information, dtype=float)
    if info.size == 1:
        return alpha
    # P(S_j > c sqrt(I_j) at some look j), S a Brownian motion in information: the
    # density of the paths not yet past, carried look to look on a grid (Armitage,
    # McPherson and Rowe, J. R. Stat. Soc. A 132, 1969)
    grid = np.linspace(-10, 6, 800) * math.sqrt(info[-1])
    step = grid[1] - grid[0]
    start = np.exp(-0.5 * grid ** 2 / info[0]) / math.sqrt(2 * math.pi * info[0])
    moves = [np.exp(-0.5 * np.subtract.outer(grid, grid) ** 2 / (now - before))
             * step / math.sqrt(2 * math.pi * (now - before))
             for before, now in zip(info[:-1], info[1:])]

    def crossed(c: float) -> float:
        density = np.where(grid <= c * math.sqrt(info[0]), start, 0.0)
        for move, now in zip(moves, info[1:]):
            density = np.where(grid <= c * math.sqrt(now), move @ density, 0.0)
        return 1 - float(density.sum() * step)

    lo, hi = ndtri(1 - alpha), ndtri(1 - alpha / info.size)
    for _ in range(40):  # the boundary c with P(any look past c) = alpha
        c = (lo + hi) / 2
        lo, hi = (c, hi) if crossed(c) > alpha else (lo, c)
    return float(ndtr(-hi))


@dataclass(frozen=True)
class Stage:
    """One stage's estimates of a family's members: log time ratios, their standard errors
    and degrees of freedom (se NaN: not estimated there)."""
    d: np.ndarray
    se: np.ndarray
    df: np.ndarray

    def z(self, b: np.ndarray) -> np.ndarray:
        """The one-sided evidence that d > b, as a standard normal quantile (0 where not
        estimated: no evidence either way)."""
        from scipy.special import ndtri
        with np.errstate(all="ignore"):
            z = -ndtri(t_cdf(self.df, -(self.d - b) / self.se))
        return np.where(np.isfinite(self.se) & (self.se > 0), z, 0.0)


@dataclass(frozen=True)
class Staged:
    """A two-stage family's tests: BH-adjusted p of `over` and `under`, the interval of d
    (FCR level where named), and the d both stages together put at the middle."""
    over: np.ndarray
    under: np.ndarray
    low: np.ndarray
    high: np.ndarray
    centre: np.ndarray


def staged_tests(first: Stage, second: Stage, weight: float, bound: float,
                 alpha: float = ALPHA) -> Staged:
    """The family's hypotheses on two stages' data, the second fresh and its members chosen
    after the first (an adaptive design): each stage's one-sided evidence combined by the
    weighted inverse normal, Z = sqrt(w) z1 + sqrt(1 - w) z2 (Lehmacher and Wassmer,
    Biometrics 55, 1999), with w fixed before the second stage began, is standard normal
    under the hypothesis whatever the first stage chose; then BH over the family, as
    family_tests. The interval is every d the combined test does not reject at its level."""
    from scipy.special import ndtr, ndtri

    def z(b):
        return math.sqrt(weight) * first.z(b) + math.sqrt(1 - weight) * second.z(b)

    m = second.d.size
    at = np.full(m, bound)
    over = benjamini_hochberg(np.minimum(2 * ndtr(-z(at)), 1.0))  # two-sided, as family_tests
    under = benjamini_hochberg(ndtr(z(at)))
    named = max(int(np.sum(over < alpha)), 1)
    level = np.where(over < alpha, 1 - named * alpha / (2 * m), 1 - alpha / 2)
    q = ndtri(level)
    return Staged(over, under, _solve(z, (first, second), q), _solve(z, (first, second), -q),
                  _solve(z, (first, second), np.zeros(m)))


def _solve(z, stages: tuple[Stage, ...], target: np.ndarray) -> np.ndarray:
    """The b where z(b), decreasing in b, equals target (bisection over every member at
    once); -inf or inf where it does not reach it within a thousand standard errors."""
    reach = max(1e3 * np.nanmax(np.append(s.se, 1e-12)) + np.nanmax(np.append(np.abs(s.d), 0))
                for s in stages)
    lo, hi = np.full(target.size, -reach), np.full(target.size, reach)
    for _ in range(100):
        mid = (lo + hi) / 2
        above = z(mid) > target
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    out = (lo + hi) / 2
    return np.where(z(np.full(target.size, -reach)) < target, -np.inf,
                    np.where(z(np.full(target.size, reach)) > target, np.inf, out))


@dataclass(frozen=True)
class Decided:
    """One estimate's outcome in its family: which test passed (over, apart, under or
    None; "untested": no spread known), the adjusted p of that test (of `over` where none
    passed), the interval of the time ratio, the smallest ratio `over` would detect, and
    the log ratio `over` named beyond (Family.cut)."""
    outcome: str | None
    p: float | None
    interval: tuple[float, float] | None
    detectable: float | None
    cut: float | None = None



def decide(found: list[Estimate], bound: float, equivalence: bool = False,
           alpha: float = ALPHA, over_alpha: float | None = None,
           next_alpha: float | None = None) -> list[Decided]:
    """The family's outcomes: `bound` the threshold's log time ratio (> 0); `over_alpha`:
    the level `over` names at where the family was selected among others, `next_alpha`
    the one it would have needed where it was not (selected_levels). Each outcome's
    interval is its test's (family_tests), so the word agrees with it: over, wholly
    beyond the bound; under, wholly within it; apart, clear of 1 (and within the bound
    where slower, else the word is under's); undecided, holding a bound."""
    tested = [i for i, e in enumerate(found) if _tested(e)]
    out = [Decided("untested", None, None, None)] * len(found)
    if not tested:
        return out
    d = np.array([found[i].log_ratio for i in tested])
    f = family_tests(d, np.array([found[i].se for i in tested]),
                    np.array([found[i].test_df for i in tested]), bound, equivalence, alpha,
                    over_alpha, next_alpha)
    for j, i in enumerate(tested):
        slower_within = d[j] > 0 and f.under[j] < alpha and \
            d[j] - f.moved[j] > 0 and d[j] + f.moved[j] < bound
        if f.over[j] < alpha:
            outcome, p, half = "over", f.over[j], f.fcr[j]
        elif f.apart[j] < alpha and (d[j] < 0 or slower_within):
            outcome, p, half = "apart", f.apart[j], f.moved[j]
        elif f.under[j] < alpha:
            outcome, p, half = "under", f.under[j], f.within[j]
        else:
            outcome, p, half = None, f.over[j], f.undecided[j]
        out[i] = Decided(outcome, float(p), (math.exp(d[j] - half), math.exp(d[j] + half)),
                         float(f.detectable[j]), float(f.cut[j]))
    return out
