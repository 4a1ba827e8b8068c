"""Property-based tests: random valid trees count exactly; broken documents fail cleanly."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentjudge.atif import load_trees
from agentjudge.atif.document import parse_trajectory
from agentjudge.errors import InputError
from tests.atif.docs import doc, write

SETTINGS = settings(
    max_examples=int(os.environ.get("AGENTJUDGE_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@dataclass
class Spec:
    steps: int
    version: str
    children: list[tuple[str, Spec]] = field(default_factory=list)

    def nodes(self) -> int:
        return 1 + sum(c.nodes() for _, c in self.children)

    def total_steps(self) -> int:
        return self.steps + sum(c.total_steps() for _, c in self.children)

    def depth(self) -> int:
        return max((1 + c.depth() for _, c in self.children), default=0)


@st.composite
def specs(draw: st.DrawFn, depth: int = 0) -> Spec:
    version = draw(st.sampled_from(["ATIF-v1.2", "ATIF-v1.5", "ATIF-v1.7", "ATIF-v1.8"]))
    spec = Spec(draw(st.integers(1, 6)), version)
    if depth < 3:
        kinds = ["file", "embedded"] if version >= "ATIF-v1.7" else ["file"]
        for _ in range(draw(st.integers(0, 3 - depth))):
            spec.children.append((draw(st.sampled_from(kinds)), draw(specs(depth + 1))))
    return spec


class Emitter:
    """Turns a Spec into documents on disk: file children get files, embedded ones nest.

    A file child of a file in folder D is written to D/cK/tK.json and referenced as
    "cK/tK.json", so refs are resolved relative to the file that holds them.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.count = 0

    def emit(self, spec: Spec, here: Path) -> dict[str, Any]:
        self.count += 1
        tid = f"t{self.count}"
        document = doc(spec.steps, spec.version, session_id=f"s{self.count}", trajectory_id=tid)
        refs, nested = [], []
        for kind, child in spec.children:
            if kind == "embedded":
                child_doc = self.emit(child, here)
                nested.append(child_doc)
                refs.append({"trajectory_id": child_doc["trajectory_id"]})
            else:
                sub = here / f"c{self.count + 1}"
                child_doc = self.emit(child, sub)
                name = f"{sub.name}/{child_doc['trajectory_id']}.json"
                write(self.folder / here / name, child_doc)
                refs.append({"trajectory_path": name, "session_id": "informational"})
        if nested:
            document["subagent_trajectories"] = nested
        if refs:
            document["steps"][-1]["observation"] = {
                "results": [{"content": "delegated", "subagent_trajectory_ref": refs}]
            }
        return document


@SETTINGS
@given(specs())
def test_random_valid_trees_count_exactly(spec: Spec) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        emitter = Emitter(folder)
        write(folder / "root.json", emitter.emit(spec, Path()))
        roots = list(load_trees([folder]))
        assert len(roots) == 1, [r.file for r in roots]
        (root,) = roots
        assert root.valid, root.all_problems()
        assert sum(1 for _ in root.walk()) == spec.nodes()
        assert root.subtree_steps == spec.total_steps()
        assert root.max_depth == spec.depth()
        assert root.all_omitted() == []


# -- broken documents -------------------------------------------------------------------

VALID = doc(4)
VALID["steps"][1]["tool_calls"] = [{"tool_call_id": "c", "function_name": "ls", "arguments": {}}]
VALID["steps"][1]["observation"] = {"results": [{"source_call_id": "c", "content": "x"}]}

WRONG_TYPES: list[Any] = [None, 3.5, -1, True, "text", [], {}, [1, "a"], {"k": None}]


def _objects(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every JSON object inside `value` (including the top)."""
    out: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        out.append(path)
        for key, item in value.items():
            out.extend(_objects(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(_objects(item, (*path, index)))
    return out


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


REQUIRED: list[tuple[str | int, ...]] = [
    ("agent",),
    ("steps",),
    ("agent", "name"),
    ("agent", "version"),
]
REQUIRED += [("steps", i, key) for i in range(4) for key in ("step_id", "source", "message")]


@st.composite
def broken_documents(draw: st.DrawFn) -> bytes:
    document = json.loads(json.dumps(VALID))
    kind = draw(st.sampled_from(["delete", "retype", "unknown_key", "renumber", "truncate"]))
    if kind == "delete":
        *parent, key = draw(st.sampled_from(REQUIRED))
        del _at(document, tuple(parent))[key]
    elif kind == "retype":
        *parent, key = draw(st.sampled_from(REQUIRED))
        value = draw(st.sampled_from(WRONG_TYPES))
        if key in ("name", "version") and isinstance(value, str):
            value = 7
        if key == "message" and (isinstance(value, str) or value == []):
            value = 7
        if key == "step_id" and value == -1:
            value = 0
        _at(document, tuple(parent))[key] = value
    elif kind == "unknown_key":
        # every ATIF object forbids unknown keys, except the free-form `arguments` and `extra`
        strict = [p for p in _objects(document) if not p or p[-1] not in ("arguments", "extra")]
        target = _at(document, draw(st.sampled_from(strict)))
        target["zz_" + draw(st.text("abc", min_size=1, max_size=5))] = 1
    elif kind == "renumber":
        index = draw(st.integers(0, 3))
        document["steps"][index]["step_id"] = draw(
            st.integers(1, 50).filter(lambda n: n != index + 1)
        )
    else:
        data = json.dumps(document).encode()
        return data[: draw(st.integers(0, len(data) - 1))]
    return json.dumps(document).encode()


@SETTINGS
@given(broken_documents())
def test_broken_documents_raise_our_input_error(data: bytes) -> None:
    with pytest.raises(InputError) as caught:
        parse_trajectory(data, "t.json")
    assert all(p.file == "t.json" and p.path.startswith("$") for p in caught.value.problems)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@SETTINGS
@given(st.one_of(st.binary(max_size=200), JSON.map(lambda v: json.dumps(v).encode())))
def test_arbitrary_input_never_raises_anything_else(data: bytes) -> None:
    with contextlib.suppress(InputError):
        parse_trajectory(data, "t.json")


@SETTINGS
@given(broken_documents())
def test_a_broken_file_in_a_folder_is_reported_not_raised(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "bad.json").write_bytes(data)
        (root,) = list(load_trees([tmp]))
        assert not root.valid
