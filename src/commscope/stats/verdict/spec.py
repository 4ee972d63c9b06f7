"""How a command's verdicts are made, stored with each of its runs (the run's settings,
`verdict`), so that `--runs`, the report and a replay judge its runs as it did."""

from __future__ import annotations

import json
from dataclasses import dataclass

from .threshold import DEFAULTS, Threshold, parse_threshold

# What each verb stores, in this order (the stored JSON is unchanged since schema 8).
FIELDS = {"check": ("threshold", "catalogue", "guidelines"), "tune": ("min_gain", "writable"),
          "health": ("threshold", "screen"), "congestion": ("threshold", "aggressors", "placebo")}
OPTIONAL = ("screen",)  # stored only where given


@dataclass(frozen=True)
class VerdictSpec:
    verb: str  # check, tune, health or congestion
    threshold: str | None = None  # a fraction as text ("0.05"); tune's is min_gain
    min_gain: str | None = None
    catalogue: list | None = None  # check: the guidelines given with --catalogue
    guidelines: tuple[str, ...] | None = None  # check: the guidelines the command judged
    writable: dict | None = None  # tune: the algorithms a rules file can name (None: any)
    aggressors: int | None = None  # congestion
    placebo: bool | None = None
    screen: bool | None = None  # health: the verdicts of a screen (health --screen)

    @property
    def limit(self) -> Threshold:
        """The threshold the command judged at (tune: its least gain), else the verb's
        default."""
        return parse_threshold(self.threshold or self.min_gain or DEFAULTS[self.verb].threshold)

    def as_dict(self) -> dict:
        return {"verb": self.verb, **{k: _plain(getattr(self, k)) for k in FIELDS[self.verb]
                                      if k not in OPTIONAL or getattr(self, k) is not None}}

    @classmethod
    def of(cls, stored: dict | None) -> VerdictSpec | None:
        """The spec a run stored (None: the run was not measured for a verdict)."""
        if not stored or stored.get("verb") not in FIELDS:
            return None
        given = {k: stored.get(k) for k in FIELDS[stored["verb"]]}
        if given.get("guidelines") is not None:
            given["guidelines"] = tuple(given["guidelines"])
        return cls(stored["verb"], **given)


def by_spec(runs, verb: str) -> list[tuple[VerdictSpec, list]]:
    """The runs (each with `command` and `settings`) that `verb`'s commands made, grouped
    by how each command judged, so that each group is judged again as its command did."""
    groups: dict[str, tuple[VerdictSpec, list]] = {}
    for r in runs:
        if r.command[1:2] == [verb]:
            given = VerdictSpec.of(r.settings.get("verdict")) or VerdictSpec(verb)
            groups.setdefault(json.dumps(given.as_dict(), sort_keys=True),
                              (given, []))[1].append(r)
    return list(groups.values())


def _plain(value):
    return list(value) if isinstance(value, tuple) else value
