"""graph-agents-cli's `eval grade` (and the grading stage of `eval run`), by agentjudge.

graph-agents-cli runs this from the project folder, with the flags of `eval grade`
appended. It hands them to `agentjudge grade`, saying where the user stood (so that a
relative path is read as graph-agents-cli reads it: `--traces` under the project, else
from there; `--config` from there, else under the project). Without `agentjudge` on PATH it
stops with exit 3, graph-agents-cli's code for a configuration problem.

Kept to the standard library and old Pythons: it runs under whatever `python3` is on PATH.
"""

import os
import shutil
import sys


def main() -> int:
    agentjudge = shutil.which("agentjudge")
    if agentjudge is None:
        sys.stderr.write(
            "error: agentjudge is not installed where graph-agents-cli runs (no `agentjudge` "
            "on PATH): install it (pip install /path/to/agentjudge, or uv tool install "
            "/path/to/agentjudge), or remove the extension (graph-agents-cli extension "
            "remove agentjudge)\n"
        )
        return 3
    caller = caller_dir()
    if caller:
        os.environ["AGENTJUDGE_CALLER_DIR"] = caller
    os.execv(agentjudge, [agentjudge, "grade", *sys.argv[1:]])
    return 0  # not reached: execv replaces this process


def caller_dir() -> str:
    """Where graph-agents-cli was run from (it runs us from the project folder): its own
    working directory where the system shows it (Linux), else the shell's `PWD`."""
    try:
        return os.readlink(f"/proc/{os.getppid()}/cwd")
    except OSError:
        caller = os.environ.get("PWD", "")
        return caller if os.path.isdir(caller) else ""


if __name__ == "__main__":
    sys.exit(main())
