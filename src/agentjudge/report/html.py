"""The HTML report: one self-contained static page from a scoring or grading results document.

Pure: a results document in, an HTML string out. The page holds its data as JSON in a
`<script type="application/json">` element (with `<`, `>`, `&`, U+2028 and U+2029 escaped,
so no string in it can end the element) and a small script that builds the DOM with
`textContent` only. A Content-Security-Policy allows exactly that script and style by hash
and nothing else: no network, and a string that escaped its escaping still could not run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from functools import cache
from importlib.resources import files
from typing import Any

from agentjudge.errors import UsageError
from agentjudge.report.html_grade import grade_view
from agentjudge.report.html_score import score_view
from agentjudge.results.grade import GRADE, GradeResults
from agentjudge.results.score import SCORE, ScoreResults

# characters that could end or confuse the element the JSON sits in; inside JSON they only
# occur in strings, where the \u escapes mean the same characters
_JSON_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def score_page(document: ScoreResults) -> str:
    """The report page of score results."""
    return render_page(score_view(document))


def grade_page(document: GradeResults) -> str:
    """The report page of grade results."""
    return render_page(grade_view(document))


def results_page(document: Any, source: str) -> str:
    """The report page of a results document read from `source`, once it holds to the
    contract of its kind (`results/`); else a UsageError (exit 3) naming the file."""
    if SCORE.claims(document):
        return score_page(SCORE.check(document, source))
    if GRADE.claims(document):
        return grade_page(GRADE.check(document, source))
    raise UsageError(
        f"{source}: not an agentjudge results file: neither score results (schema "
        f"{SCORE.schema}) nor grade results (cases, summary); pass the results file of "
        "agentjudge score or agentjudge grade"
    )


def render_page(view: dict[str, Any]) -> str:
    """The page for a view: inline style, the data as JSON, the inline script."""
    style, script = _asset("report.css"), _script()
    policy = (
        f"default-src 'none'; style-src '{_sha256(style)}'; script-src '{_sha256(script)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    title = html.escape(f"agentjudge · {view['title']}", quote=True)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="agentjudge">\n'
        '<link rel="icon" href="data:,">\n'
        f"<title>{title}</title>\n<style>{style}</style>\n</head>\n<body>\n"
        "<noscript><p>This report needs JavaScript to show its data; "
        "the results JSON holds the same numbers.</p></noscript>\n"
        '<div id="app"></div>\n'
        f'<script type="application/json" id="report-data">{script_json(view)}</script>\n'
        f"<script>{script}</script>\n</body>\n</html>\n"
    )


def script_json(value: Any) -> str:
    """JSON that is safe as the content of a `<script>` element: nothing in it can close
    the element or open a comment, whatever its strings hold."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).translate(
        _JSON_ESCAPES
    )


@cache
def _script() -> str:
    """The page's code: the shared part and both pages' parts in one function scope."""
    parts = [_asset(name) for name in ("common.js", "score.js", "grade.js")]
    return "(function () {\n" + "\n".join(parts) + "\nstart();\n})();\n"


@cache
def _asset(name: str) -> str:
    return (files("agentjudge.report") / "assets" / name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")
