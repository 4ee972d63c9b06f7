"""JUnit XML for CI systems, one writer for the verdict verbs (check, compare, tune
--verify): a testsuite of testcases, a failed verdict a failure with its figures, a
passed one its word in system-out."""

from __future__ import annotations

from dataclasses import dataclass
from xml.etree import ElementTree


@dataclass(frozen=True)
class Case:
    classname: str
    name: str
    failure: str | None = None  # the failure's message; None: passed
    kind: str | None = None  # the failure's type attribute, if any
    output: str | None = None  # what a passed case prints (its verdict word and figures)


def suite(name: str, cases: list[Case]) -> str:
    root = ElementTree.Element("testsuite", name=name, tests=str(len(cases)),
                               failures=str(sum(c.failure is not None for c in cases)))
    for c in cases:
        case = ElementTree.SubElement(root, "testcase", classname=c.classname, name=c.name)
        if c.failure is not None:
            ElementTree.SubElement(case, "failure", message=c.failure,
                                   **({"type": c.kind} if c.kind else {}))
        elif c.output is not None:
            ElementTree.SubElement(case, "system-out").text = c.output
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True)
