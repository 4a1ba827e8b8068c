"""A judge job run as a subprocess by the kill-and-resume test: N requests through a store.

python -m tests.judge.resume_worker URL STORE OUT N
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from agentjudge.judge import JudgeClient, JudgeRequest
from agentjudge.judge.providers import OpenAICompatible
from agentjudge.judge.request import Message
from agentjudge.judge.store import VerdictStore
from agentjudge.judge.store_commits import LocalVerdicts


def item_request(index: int) -> JudgeRequest:
    return JudgeRequest((Message("user", f"item-{index} [[score=0.{index % 10}]]"),), "resume-v1")


async def run(url: str, store_path: str, count: int) -> dict[str, float | None]:
    store = VerdictStore(store_path)
    kept = LocalVerdicts(store)
    async with JudgeClient(OpenAICompatible(url, "judge"), concurrency=4, store=kept) as client:
        outcomes = await asyncio.gather(*(client.judge(item_request(i)) for i in range(count)))
    return {str(i): o.verdict.score if o.verdict else None for i, o in enumerate(outcomes)}


def main() -> None:
    url, store_path, out, count = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
    results = asyncio.run(run(url, store_path, count))
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(results, sort_keys=True))
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
