"""What a figure read from another tool's file must be to stand for a measurement: a
number, finite, and within what its kind allows. Every figure the importers keep passes
through `checked` (the benchmark tables' rows, nccl-tests' JSON, mpiP's report and
mpisee's tables), so a NaN, an infinity or a negative time is refused where it is read,
naming the file and line, and never reaches the store (where it would come back as
'+nan%', 'alpha nan' or a bare NaN in an export).
"""

from __future__ import annotations

import math

from ..system.errors import UserError

# kind -> (whether zero is a measurement, the rule as the refusal states it). A time per
# message or a run's wall time of zero measured nothing; a sum over calls, a count or a
# bandwidth rounded to the tool's print precision (IMB's 0.00 MB/s at 0 bytes, nccl-tests'
# busbw of small sizes) may be zero. "signed" is an identifier (nccl-tests' root -1: none).
KINDS = {"time": (False, "a time must be a positive finite number"),
         "time spent": (True, "a time spent must be a finite number, 0 or more"),
         "bandwidth": (True, "a bandwidth must be a finite number, 0 or more"),
         "headline bandwidth": (False, "a bandwidth the size is measured by must be a "
                                       "positive finite number"),
         "count": (True, "a count must be a finite number, 0 or more"),
         "size": (True, "a size must be a whole number of bytes, 0 or more"),
         "bytes": (True, "bytes must be a finite number, 0 or more"),
         "whole": (True, "it must be a whole number, 0 or more"),
         "signed": (True, "it must be a finite number")}
LINE = "fix or delete the line"


def checked(where: str, label: str, token, kind: str, remedy: str = LINE) -> float:
    """`token` (as printed, or a value a tool stored) as a number of `kind`; a UserError
    '{where}: {label} "{token}" is ...; {rule} ({remedy})' where it cannot be one."""
    zero_ok, rule = KINDS[kind]
    try:
        value = float(token)
    except (TypeError, ValueError):
        value = None
    if value is None or math.isnan(value):
        problem = "not a number"
    elif math.isinf(value):
        problem = "infinite"
    elif value < 0 and kind != "signed":
        problem = "negative"
    elif value == 0 and not zero_ok:
        problem = "zero"
    elif kind in ("size", "whole") and not value.is_integer():
        problem = "not a whole number"
    else:
        return value
    raise UserError(f'{where}: {label} "{token}" is {problem}; {rule} ({remedy})')


def kind_of(name: str) -> str:
    """The kind of a benchmark figure by commscope's name of its column (units in names:
    _us a time, _MBps and _GBps bandwidths)."""
    if name.endswith("_us"):
        return "time"
    if name.endswith(("_MBps", "_GBps")) or name == "messages_per_s":
        return "bandwidth"
    return "signed" if name == "root" else "count"


def label_of(name: str) -> str:
    """A column's name as a refusal shows it: its unit left off (latency_us: latency;
    IMB's t[usec], t_us, as time)."""
    for unit in ("_us", "_MBps", "_GBps"):
        if name.endswith(unit):
            return "time" if name == "t_us" else name[:-len(unit)]
    return name
