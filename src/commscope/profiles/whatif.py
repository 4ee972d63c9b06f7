"""What the pricing of a profile (price.py) falls back on and what it asks "what if" of:
the Hockney line of the stored ping-pongs and the collective algorithm models on it
(Thakur, Rabenseifner & Gropp 2005), the bandwidth scaled, a rules file of `tune`."""

from __future__ import annotations

import dataclasses
import shlex

from .price import COLLECTIVES, Need, Priced, Prices


class Lines:
    """The fallback: a message's time t(m) from the segmented Hockney fit of the stored
    ping-pongs of the same spread (models/groups.py, bootstrap CIs of the single line),
    and a collective's from the algorithm models on t(m), the fastest of them (the
    library is taken to choose well)."""

    def __init__(self, prices: Prices):
        self.prices = prices
        self.fits: dict[tuple, object] = {}

    def _fit(self, mode: str, several: bool):
        key = (mode, several)
        if key not in self.fits:
            from ..models.groups import Group, fit_group, group_cases
            cases = self.prices.by_need.get(("pingpong", mode, 2, several), [])
            groups = group_cases(cases) if cases else []
            best = max(groups, key=lambda g: len(g.cases), default=None)
            found = fit_group(Group(best.config, best.cases)) if best else None
            self.fits[key] = found if found is not None and found.fit is not None else None
        return self.fits[key]

    def __call__(self, need: Need):
        mode = need.mode if need.kernel == "pingpong" else "standard"
        found = self._fit(mode, need.several_hosts)
        if found is None:
            return None
        fit = found.fit
        runs = ", ".join(map(str, sorted({c.run_id for c in found.group.cases})))
        ends = _line_ends(fit.single)
        if need.kernel == "pingpong":
            cost = float(fit.time_s(need.bytes))
            ci = None if ends is None else tuple(float(e.time_s(need.bytes)) for e in ends)
            return cost, ci, "hockney", f"the ping-pong fit of runs {runs}"
        if need.kernel == "pingping":
            return None
        from ..models.collectives import ALGORITHMS
        models = ALGORITHMS.get(need.kernel)
        if not models:
            return None
        name, model = min(models.items(),
                          key=lambda kv: float(kv[1](fit.time_s, need.ranks, need.bytes)))
        cost = float(model(fit.time_s, need.ranks, need.bytes))
        ci = None if ends is None else tuple(
            float(model(e.time_s, need.ranks, need.bytes)) for e in ends)
        return cost, ci, f"model:{name}", f"{name} on the ping-pong fit of runs {runs}"

    def ratio(self, need: Need, factor: float) -> float | None:
        """The need's time with the bandwidth times `factor`, over its time now, by the
        single Hockney line of its spread's ping-pongs and (collectives) the fastest
        algorithm model; None without a fit."""
        from ..models.collectives import ALGORITHMS
        from ..models.hockney import Line
        found = self._fit("standard" if need.mode is None else need.mode, need.several_hosts)
        if found is None:
            return None
        line = found.fit.single.line
        faster = Line(line.alpha_s, line.inverse_bandwidth_s_per_byte / factor)
        models = ALGORITHMS.get(need.kernel)
        if need.kernel in ("pingpong", "pingping") or not models:
            now, then = float(line.time_s(need.bytes)), float(faster.time_s(need.bytes))
        else:
            def best(t):
                return min(float(m(t, need.ranks, need.bytes)) for m in models.values())
            now, then = best(line.time_s), best(faster.time_s)
        return then / now if now > 0 else None


def _line_ends(single):
    """The Hockney lines at the fast and slow ends of alpha's and B's 95% intervals."""
    from ..models.hockney import Line
    a, b = single.alpha_ci_s, single.bandwidth_ci_Bps
    if a is None or b is None or b[0] is None:
        return None
    fast = Line(a[0], 0.0 if b[1] is None else 1 / b[1])
    return fast, Line(a[1], 1 / b[0])


def scaled(priced: list[Priced], lines: Lines, factor: float) -> list[Priced]:
    """Every priced row with the bandwidth of its Hockney line times `factor`: its cost
    times the model's ratio at the row's size, alpha kept."""
    out = []
    for p in priced:
        if p.cost_s is None or p.need is None or p.source.startswith("with"):
            out.append(p)
            continue
        ratio = lines.ratio(p.need, factor)
        if ratio is None:
            out.append(dataclasses.replace(p, cost_s=None, cost_ci_s=None,
                                           why_not="no ping-pong fit to scale"))
            continue
        ci = None if p.cost_ci_s is None else (p.cost_ci_s[0] * ratio, p.cost_ci_s[1] * ratio)
        out.append(dataclasses.replace(p, cost_s=p.cost_s * ratio, cost_ci_s=ci))
    return out


def under_rules(priced: list[Priced], rules: Prices, path: str) -> list[Priced]:
    """The collectives' rows priced on the runs measured under a rules file (`tune
    --verify` measures them), the other rows as they are."""
    out = []
    for p in priced:
        if p.need is None or p.need.kernel not in COLLECTIVES.values() or p.cost_s is None:
            out.append(p)
            continue
        found = rules.measured(p.need)
        out.append(dataclasses.replace(p, cost_s=found[0], cost_ci_s=found[1]) if found else
                   dataclasses.replace(p, cost_s=None, cost_ci_s=None, why_not=(
                       f"not measured under the rules: `commscope tune --verify "
                       f"{shlex.quote(str(path))} "
                       f"--np {p.need.ranks} --sizes {p.need.bytes}`")))
    return out
