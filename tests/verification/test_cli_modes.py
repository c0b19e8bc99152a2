"""`verify --baseline`, `--until-decided`, `--sequence` on the command line, and what `runs` and
`runs show` print for such runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skillstudio.cli.main import main
from skillstudio.library import create_library
from skillstudio.store import Database, SkillQuery, SkillRepository
from skillstudio.store.runs import RunStore
from skillstudio.verification import sequential
from skillstudio.verification.sequential import ABOVE, BELOW, UNDECIDED
from tests.verification.helpers import fill_library

HARD = ["--opponent", "IC Default Hard"]


@pytest.fixture
def sample(tmp_path: Path) -> str:
    path = tmp_path / "sample.db"
    create_library(path, sample=True).close()
    return str(path)


def _ids(db: str, *names: str) -> list[str]:
    with Database(db) as database:
        repository = SkillRepository(database)
        summaries = repository.summaries(repository.query(SkillQuery()).ids)
    return [next(s.id for s in summaries if s.name.startswith(name)) for name in names]


def _runs(db: str) -> int:
    with Database(db) as database:
        return len(RunStore(database).runs(limit=None))


def test_cli_baseline_reports_the_lift_and_flags_a_worse_plan(sample: str, capsys) -> None:
    [aa, mig] = _ids(sample, "Early AA against Yak rush", "MiG strikes on exposed ore trucks")
    argv = ["--db", sample, "verify", "--games", "12", *HARD, "--seed", "1", "--skill", aa, "--skill", mig]
    assert main([*argv, "--baseline"]) == 0
    captured = capsys.readouterr()
    assert "default plan:" in captured.err  # the progress of the default plan's games
    text = captured.out
    assert "Lift over the default plan" in text
    [aa_line] = [line for line in text.splitlines() if line.strip().startswith(aa[:8]) and "pairs" in line]
    assert aa_line.endswith("worse than the default plan") and "over 12 pairs" in aa_line
    assert "1 skill worse than the default plan" in text
    [run] = RunStore(Database(sample)).runs()
    assert main(["--db", sample, "runs", "show", run.id, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["baseline"] is True and document["until_decided"] is None and document["sequence"] is None
    lifts = {entry["id"]: entry["lift"] for entry in document["skills"]}
    assert lifts[aa]["worse_than_default_plan"] is True and lifts[aa]["pairs"] == 12
    assert lifts[aa]["newcombe_95"][1] < 0 and lifts[aa]["current_body"] is True
    assert main(["--db", sample, "runs"]) == 0
    assert "(lift of 2, 1 worse than the default plan)" in capsys.readouterr().out
    assert main(["--db", sample, "runs", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["lift"] == {"skills": 2, "worse_than_default_plan": 1}


def test_cli_until_decided(more_libraries, tmp_path: Path, capsys) -> None:
    db = str(fill_library(more_libraries("lib"), 2))
    base = ["--db", db, "verify", *HARD, "--seed", "3", "--quiet"]
    assert main([*base, "--until-decided", "--max-games", "100"]) == 0
    text = capsys.readouterr().out
    assert "Sequential test (SPRT, delta 10%, alpha 5%, beta 5%)" in text and "bar (>40%" in text
    assert main([*base, "--until-decided", "--delta", "0.05", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["until_decided"] == {"delta": 0.05, "alpha": 0.05, "beta": 0.05}
    assert document["run"]["games_per_skill"] == sequential.DEFAULT_MAX_GAMES
    for entry in document["skills"]:
        assert entry["sequential"]["decision"] in (ABOVE, BELOW, UNDECIDED) and entry["sequential"]["delta"] == 0.05
    assert main(["--db", db, "runs"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert all(re.search(r"\(\d+ (above|below|undecided)", line) for line in listed[1:3])  # its decisions


def test_cli_sequence(sample: str, capsys) -> None:
    rush, armor = _ids(sample, "Light tank rush at 5:00", "Transition to medium armor")
    argv = ["--db", sample, "verify", "--sequence", f"{rush[:8]},{armor[:8]}", "--games", "10", *HARD, "--quiet"]
    assert main([*argv, "--switch-at", "12:00", "--seed", "4"]) == 0
    text = capsys.readouterr().out
    assert "(sequence, finished)" in text and "then from 12:00 Transition to medium armor" in text
    assert re.search(r"-> Transition to medium armor at 12:00: (success_count \+\d+|nothing added)", text)
    assert main([*argv, "--json"]) == 0  # the default switch: the armour skill's mid game
    document = json.loads(capsys.readouterr().out)
    [pair] = document["sequence"]["pairs"]
    assert (pair["first"], pair["then"], pair["switch_at"], pair["applied"]) == (rush, armor, "mid", True)
    assert pair["success_count_added"] == (pair["wins"] if pair["credited"] else 0)
    assert document["run"]["kind"] == "sequence"
    assert main(["--db", sample, "runs", "show", document["run"]["id"]]) == 0
    assert "from mid (8:00) Transition to medium armor" in capsys.readouterr().out


def test_cli_refuses_what_does_not_fit_and_writes_nothing(sample: str, capsys) -> None:
    rush, armor, aa = _ids(sample, "Light tank rush at 5:00", "Transition to medium armor", "Early AA")
    example = _ids(sample, "Example plan: flank")[0]
    verify = ["--db", sample, "verify"]
    usage = [
        [*verify, "--until-decided", "--games", "10", *HARD],
        [*verify, "--games", "10", *HARD, "--max-games", "10"],
        [*verify, "--games", "10", *HARD, "--delta", "0.1"],
        [*verify, "--until-decided", "--delta", "0.35", *HARD],  # Proven's 70% + 35% is past 100%
        [*verify, "--games", "10", *HARD, "--switch-at", "12:00"],
        [*verify, "--sequence", f"{rush},{armor}", "--games", "10", *HARD, "--baseline"],
        [*verify, "--sequence", f"{rush},{armor}", "--games", "10", *HARD, "--skill", rush],
        [*verify, "--sequence", f"{rush},{armor}", *HARD],
        [*verify, "--resume", "abc", "--baseline"],
    ]
    for argv in usage:
        assert main(argv) == 2, argv
    failed = {
        "no skill 'nosuch'": [*verify, "--sequence", f"{rush},nosuch", "--games", "5", *HARD],
        "verified_example body": [*verify, "--sequence", f"{rush},{example}", "--games", "5", *HARD],
        "early-game skill": [*verify, "--sequence", f"{rush},{aa}", "--games", "5", *HARD],
        "time limit": [*verify, "--sequence", f"{rush},{armor}", "--switch-at", "31:00", "--games", "5", *HARD],
        "unknown opponent": [*verify, "--sequence", f"{rush},{armor}", "--games", "5", "--opponent", "Nobody"],
        "needs the built-in engine": [*verify, "--games", "5", *HARD, "--baseline", "--engine", "true"],
    }
    capsys.readouterr()
    for why, argv in failed.items():
        assert main(argv) == 1, argv
        assert why in capsys.readouterr().err, why
    assert _runs(sample) == 0


def test_until_decided_checks_delta_against_the_librarys_own_bars(more_libraries, tmp_path: Path, capsys) -> None:
    db = str(fill_library(more_libraries("lib"), 1))
    verify = ["--db", db, "verify", *HARD, "--seed", "3", "--quiet", "--until-decided", "--max-games", "20"]
    assert main(["--db", db, "config", "set", "--library", "thresholds.proven", "0.95"]) == 0
    capsys.readouterr()
    assert main(verify) == 2  # 0.95 + 0.10 is past 1: the design cannot fit this library's bar
    assert "--delta: the proven bar" in capsys.readouterr().err
    assert RunStore(Database(db)).runs() == []  # refused before anything was written
    for key, value in (("thresholds.proven", "0.6"), ("thresholds.established", "0.5")):
        assert main(["--db", db, "config", "set", "--library", key, value]) == 0
    capsys.readouterr()
    # 0.35 would not fit the default proven bar (0.70 + 0.35 > 1); it fits this library's 0.60
    assert main([*verify, "--delta", "0.35"]) == 0
    [run] = RunStore(Database(db)).runs()
    assert run.options["until_decided"]["delta"] == 0.35
