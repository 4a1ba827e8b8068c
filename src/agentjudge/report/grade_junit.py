"""The JUnit XML of a graded run: one testcase per case and one per quality metric, so CI
shows a failed gate the way it shows failed tests."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from agentjudge.files import write_file_atomic
from agentjudge.results.grade import ERROR, FAILED, MISSING, GradeResults
from agentjudge.results.grade import QUALITY_BELOW_THRESHOLD as QUALITY

# characters XML 1.0 cannot carry: a reply quoted in a reason may hold them
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def junit_xml(document: GradeResults) -> ET.ElementTree:
    """One testcase per case (failed → failure; error and missing → error; quality misses
    pass with their reasons in system-out; an unstable case has an `unstable` property
    naming its metrics), and one per quality metric."""
    root = ET.Element("testsuites", name="agentjudge grade")
    cases = ET.SubElement(root, "testsuite", name="cases")
    counts = {"tests": 0, "failures": 0, "errors": 0}
    for case in document["cases"]:
        counts["tests"] += 1
        element = ET.SubElement(
            cases, "testcase", classname="agentjudge.cases", name=_xml(case["id"])
        )
        status, text = case["status"], _xml("\n".join(case["reasons"]))
        first = _xml(case["reasons"][0]) if case["reasons"] else status
        if status == FAILED:
            counts["failures"] += 1
            ET.SubElement(element, "failure", message=first, type=status).text = text
        elif status in (ERROR, MISSING):
            counts["errors"] += 1
            ET.SubElement(element, "error", message=first, type=status).text = text
        elif status == QUALITY:
            ET.SubElement(element, "system-out").text = text
        if case.get("unstable"):  # judge samples on both sides of a threshold
            unstable = f"unstable: {', '.join(case['unstable'])}"
            ET.SubElement(element, "properties").append(
                ET.Element("property", name="unstable", value=_xml(unstable))
            )
    cases.attrib.update({k: str(v) for k, v in counts.items()})
    quality = ET.SubElement(root, "testsuite", name="quality_metrics")
    failures = 0
    for name, entry in document["quality"].items():
        element = ET.SubElement(
            quality, "testcase", classname="agentjudge.quality", name=_xml(name)
        )
        if entry["met"] is False:
            failures += 1
            message = (
                f"pass rate {entry['pass_rate']} below min_pass_rate {entry['min_pass_rate']} "
                f"({entry['passed']}/{entry['scored']} passed)"
            )
            ET.SubElement(element, "failure", message=message, type="not_met")
        elif entry["met"] is None:
            ET.SubElement(element, "skipped", message=entry["status"])
    quality.attrib.update(tests=str(len(document["quality"])), failures=str(failures), errors="0")
    return ET.ElementTree(root)


def write_junit(path: Path, document: GradeResults) -> None:
    """Write the JUnit XML atomically (a temporary file beside it, then a rename)."""
    tree = junit_xml(document)
    write_file_atomic(
        path,
        lambda out: tree.write(out, encoding="utf-8", xml_declaration=True),
        "--junit",
        "the JUnit XML",
    )


def _xml(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)
