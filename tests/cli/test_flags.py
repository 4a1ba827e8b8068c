"""The commands' flags as a user types them (cli/options.py, cli/settings.py, cli/aliases.py):
score's first-class flags, `--set`, `--help-config`, the old spellings that warn once, and
the flags graph-agents-cli passes to `grade`. Each command runs in this process
(`agentjudge.cli.main`) with the job itself replaced, so what reaches it is checked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentjudge.cli import main
from agentjudge.cli.options import CALIBRATE_ALIASES, SCORE_ALIASES
from agentjudge.errors import UsageError
from agentjudge.scoring.config import ScoreConfig
from tests.atif.docs import doc, write


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    write(tmp_path / "runs" / "a.json", doc(3))
    return tmp_path / "runs"


@pytest.fixture
def scored(monkeypatch: pytest.MonkeyPatch) -> list[ScoreConfig]:
    """The configurations `score` would run with (the job is not run)."""
    configs: list[ScoreConfig] = []

    def run_score(config: ScoreConfig, *args: Any, **kwargs: Any) -> int:
        configs.append(config)
        return 0

    monkeypatch.setattr("agentjudge.cli.score.run_score", run_score)
    return configs


def warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning:")]


def test_help_config_lists_every_key_of_the_model_with_type_default_and_description(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["score", "--help-config"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for key, field in ScoreConfig.model_fields.items():
        # read from the model: a key added to ScoreConfig is listed without anyone's help
        heads = [i for i, line in enumerate(lines) if line.startswith(f"{key}: ")]
        assert len(heads) == 1, key
        description = lines[heads[0] + 1]
        assert description.startswith("    "), key
        assert description.strip(), key
        assert field.description, f"ScoreConfig.{key} has no docstring to list"
    assert "concurrency_limit: integer >= 1 [16]" in lines
    assert 'scored_frames: all | agent ["all"]' in lines
    assert "judge_phase_timeout_seconds: number > 0 | none [none]" in lines


def test_score_help_lists_the_daily_flags_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--help"]) == 0
    shown = capsys.readouterr().out
    for alias in SCORE_ALIASES:
        assert f" {alias.flag} " not in shown, alias.flag
    for flag in ("--set", "--help-config", "--concurrency", "--judge-call-timeout", "--ray"):
        assert f" {flag} " in shown, flag


def test_set_gives_any_key_and_the_model_converts_it(runs: Path, scored: list[ScoreConfig]) -> None:
    flags = ["--set", "judge_max_attempts=7", "--set", "cache=false"]
    flags += ["--set", "partial_result_policy=skip_failed_trajectory"]
    assert main(["score", str(runs), "--judge", "fake", *flags]) == 0
    config = scored[0]
    assert (config.judge_max_attempts, config.cache) == (7, False)
    assert config.partial_result_policy == "skip_failed_trajectory"


def test_the_command_line_overrides_the_config_file(
    runs: Path, tmp_path: Path, scored: list[ScoreConfig]
) -> None:
    config = tmp_path / "job.yaml"
    config.write_text("judge: fake\ncontext_steps: 2\nconcurrency_limit: 3\n")
    argv = ["score", str(runs), "--config", str(config), "--set", "context_steps=4"]
    assert main([*argv, "--concurrency", "5"]) == 0
    assert (scored[0].context_steps, scored[0].concurrency_limit) == (4, 5)


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--set", "concurency_limit=3"], "error: --set concurency_limit: unknown parameter "
         "(did you mean concurrency_limit? agentjudge score --help-config lists them)"),
        (["--set", "context_steps=many"], "error: flags: --set context_steps: Input should be "
         "a valid integer, unable to parse string as an integer"),
        (["--set", "context_steps=0"], "error: flags: --set context_steps: Input should be "
         "greater than or equal to 1"),
        (["--set", "context_steps=2", "--set", "context_steps=3"],
         "error: --set context_steps is given twice: give it once"),
        (["--concurrency", "2", "--set", "concurrency_limit=3"],
         "error: concurrency_limit is given twice, by --concurrency and by --set "
         "concurrency_limit: give one"),
        (["--concurrency", "0"], "error: flags: --concurrency: Input should be greater than "
         "or equal to 1"),
    ],
)  # fmt: skip
def test_a_bad_set_or_flag_is_one_line_naming_it_and_exit_3(
    runs: Path,
    scored: list[ScoreConfig],
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    said: str,
) -> None:
    assert main(["score", str(runs), "--judge", "fake", *flags]) == 3
    assert capsys.readouterr().err.splitlines() == [said]
    assert scored == []


@pytest.mark.parametrize("pair", ["sk-live-0123456789", "=sk-live-0123456789", "!sk-live-0=1"])
def test_a_malformed_set_never_echoes_what_it_was_given(
    runs: Path, capsys: pytest.CaptureFixture[str], pair: str
) -> None:
    assert main(["score", str(runs), "--judge", "fake", "--set", pair]) == 3
    err = capsys.readouterr().err
    assert "sk-live" not in err
    assert err.startswith("error: --set takes KEY=VALUE")


# a valid value, not the default, for each key an old flag sets (a number otherwise)
OLD_FLAG_VALUES = {
    "benchmark_name": "humaneval",
    "reference_registry_path": "r.json",
    "reference_rubric": "other",
    "scored_frames": "agent",
    "subagent_aggregation": "hierarchical",
    "decisive_rule": "lowest_score",
    "partial_result_policy": "skip_failed_trajectory",
    "judge_api_key_file": "k",
    "judge_api_version": "2024-01-01",
    "judge_ca_bundle": "ca.pem",
    "judge_reasoning_effort": "low",
    "failure_threshold": "0.25",
    "completion_threshold": "0.25",
    "training_threshold": "0.25",
}


def test_every_old_flag_warns_once_naming_its_replacement_and_sets_its_key(
    runs: Path, scored: list[ScoreConfig], capsys: pytest.CaptureFixture[str]
) -> None:
    defaults = ScoreConfig(judge="fake")
    renamed = {"--concurrency-limit": "--concurrency N"}
    renamed["--judge-timeout-seconds"] = "--judge-call-timeout SECONDS"
    for alias in SCORE_ALIASES:
        value = OLD_FLAG_VALUES.get(alias.key, "17")
        code = main(["score", str(runs), "--judge", "fake", alias.flag, value])
        err = capsys.readouterr().err
        assert code == 0, (alias.flag, err)
        instead = renamed.get(alias.flag, f"--set {alias.key}=VALUE")
        assert warnings(err) == [
            f"warning: {alias.flag} is deprecated and will be removed: write {instead}"
        ]
        expected = getattr(
            ScoreConfig.model_validate({"judge": "fake", alias.key: value}), alias.key
        )
        got = getattr(scored.pop(), alias.key)
        assert got == expected != getattr(defaults, alias.key), alias.flag


def test_the_old_per_call_timeout_stays_per_call(
    runs: Path, scored: list[ScoreConfig], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", str(runs), "--judge", "fake", "--judge-timeout-seconds", "7"]) == 0
    assert "write --judge-call-timeout SECONDS" in capsys.readouterr().err
    assert (scored[0].judge_timeout_seconds, scored[0].judge_phase_timeout_seconds) == (7, None)
    flags = ["--judge-call-timeout", "8", "--judge-timeout", "90"]
    assert main(["score", str(runs), "--judge", "fake", *flags]) == 0
    assert (scored[1].judge_timeout_seconds, scored[1].judge_phase_timeout_seconds) == (8, 90)
    assert warnings(capsys.readouterr().err) == []


def test_ray_is_a_flag_and_its_address_another(
    runs: Path, scored: list[ScoreConfig], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", "--ray", str(runs), "--judge", "fake"]) == 0
    assert main(["score", str(runs), "--judge", "fake", "--ray"]) == 0
    assert main(["score", str(runs), "--judge", "fake", "--ray-address", "ray://h:10001"]) == 0
    assert [c.ray_address for c in scored] == ["local", "local", "ray://h:10001"]
    assert main(["score", str(runs), "--judge", "fake"]) == 0
    assert scored[-1].ray_address is None
    # the old `--ray ADDRESS`: said so, not read as a trajectory named `auto`
    assert main(["score", "--ray", "auto", str(runs), "--judge", "fake"]) == 3
    assert capsys.readouterr().err.splitlines()[-1] == (
        "error: auto: no such file, and --ray takes no address: write --ray-address auto"
    )


@pytest.fixture
def graded(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The options `grade` would run with (the grading is not run)."""
    options: list[Any] = []

    def grade(given: Any, *args: Any) -> Any:
        options.append(given)
        raise UsageError("stopped by the test")

    monkeypatch.setattr("agentjudge.cases.grade.grade", grade)
    return options


def test_the_flags_graph_agents_cli_passes_to_grade_still_parse_silently(
    graded: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    # graph-agents-cli 0.3.1's `eval grade` hands an `eval.grade` override exactly these
    argv = ["grade", "--traces", "t.json", "--dataset", "d.json", "--config", "c.yaml"]
    argv += ["--output", "o.json", "--judge-provider", "openai", "--judge-model", "m"]
    assert main([*argv, "--judge-timeout", "30"]) == 3
    assert warnings(capsys.readouterr().err) == []
    given = graded[0]
    assert (given.traces, given.dataset, given.config, given.output) == (
        "t.json",
        "d.json",
        "c.yaml",
        "o.json",
    )
    assert (given.judge_provider, given.judge_model, given.judge_timeout) == ("openai", "m", 30)


def test_grade_takes_the_shared_names(
    graded: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["grade", "--judge", "fake", "--cache", "v.sqlite", "--concurrency", "3"]
    assert main([*argv, "--judge-call-timeout", "9", "--judge-timeout", "40"]) == 3
    given = graded[0]
    assert (given.judge_provider, given.store_path, given.use_store) == ("fake", "v.sqlite", True)
    assert (given.concurrency, given.judge_call_timeout, given.judge_timeout) == (3, 9, 40)
    assert main(["grade", "--judge", "fake", "--judge-provider", "openai"]) == 3
    assert capsys.readouterr().err.splitlines()[-1] == (
        "error: --judge is given twice (--judge-provider is its other spelling)"
    )
    assert len(graded) == 1


def test_calibrate_takes_score_s_names_and_old_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentjudge.calibration import labels as labels_module

    configs: list[ScoreConfig] = []
    monkeypatch.setattr(labels_module, "load_labels", lambda path: _Labels())
    monkeypatch.setattr(
        "agentjudge.cli.calibrate.run_calibration",
        lambda config, *args, **kwargs: configs.append(config),
    )
    argv = ["calibrate", str(tmp_path / "labels.json"), "--judge", "fake", "--concurrency", "3"]
    argv += ["--judge-call-timeout", "9", "--set", "context_steps=2", "--failure-threshold", "0.3"]
    assert main(argv) == 2  # the replaced job returned no document
    config = configs[0]
    assert (config.concurrency_limit, config.judge_timeout_seconds) == (3, 9)
    assert (config.context_steps, config.failure_threshold, config.decisive_roots) == (
        2,
        0.3,
        "all",
    )
    assert warnings(capsys.readouterr().err) == [
        "warning: --failure-threshold is deprecated and will be removed: write --set "
        "failure_threshold=VALUE"
    ]
    assert {a.flag for a in CALIBRATE_ALIASES} < {a.flag for a in SCORE_ALIASES}


class _Labels:
    trajectories: tuple[str, ...] = ()


def test_grade_starts_without_the_scoring_configuration() -> None:
    # `--help-config` reads the model only when asked: grade shares score's options module
    # and its start-up is part of every CI gate's time
    code = (
        "import sys\nimport agentjudge.cli.grade\n"
        "print(sorted(m for m in sys.modules if m.startswith(('agentjudge.scoring', 'pydantic'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stdout.strip()) == (0, "[]"), done.stderr
