"""The browser's table and detail pane tell the truth about tiers and figures (issues 15 and 16):
contradicted tiers are flagged, each figure says where it comes from, the lift and compositions
show by name, refinements are told apart from their originals, dates never break (pytest-qt)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QCoreApplication, Qt  # noqa: E402
from PySide6.QtGui import QColor  # noqa: E402
from PySide6.QtWidgets import QTableView  # noqa: E402

from skillstudio.cli.main import main as cli  # noqa: E402
from skillstudio.gui.browser_state import BrowserState  # noqa: E402
from skillstudio.gui.qt_confidence_delegate import CONTRADICTION_ROLE, WARNING, QtConfidenceDelegate  # noqa: E402
from skillstudio.gui.qt_detail_pane import QtDetailPane  # noqa: E402
from skillstudio.gui.skill_table_model import CONFIDENCE_COLUMN, NAME_COLUMN, SkillTableModel  # noqa: E402
from skillstudio.model import Confidence, Provenance, Quality, Source  # noqa: E402
from skillstudio.model.evidence import EvidenceKind, VerificationRecord  # noqa: E402
from skillstudio.packages.icpkg import export_package  # noqa: E402
from skillstudio.store import Actor, Database, SkillRepository, body_hash  # noqa: E402
from skillstudio.store.paired_runs import LiftRecord, PairedRuns  # noqa: E402
from skillstudio.verification.plays import record_plays  # noqa: E402
from skillstudio.verification.runner import start_run  # noqa: E402
from skillstudio.verification.stats import PairedCounts, newcombe_paired  # noqa: E402
from tests.factories import ai_skill  # noqa: E402
from tests.packages.helpers import META  # noqa: E402

WAIT = 30_000
HARD = "IC Default Hard"


@pytest.fixture
def browser(qtbot, repository: SkillRepository, owner):
    """A table model and a detail pane following one BrowserState, as the main window wires them."""
    state = BrowserState(repository, owner)
    model = SkillTableModel(state, owner)
    pane = QtDetailPane(state, owner)
    pane.resize(480, 900)
    yield state, model, pane
    model.shutdown()
    pane.shutdown()
    state.operations.wait()


def settle(qtbot, *views) -> None:
    QCoreApplication.sendPostedEvents()  # changes already announced start their reloads first
    qtbot.waitUntil(lambda: not any(view.loading for view in views), timeout=WAIT)


def show(qtbot, state: BrowserState, model: SkillTableModel, pane: QtDetailPane, skill_id: str) -> str:
    state.set_selection([skill_id], skill_id)
    settle(qtbot, model, pane)
    return pane.toPlainText()


def cell(model: SkillTableModel, skill_id: str, column: int, role=Qt.ItemDataRole.DisplayRole):
    row = model.row_of(skill_id)
    assert row is not None
    return model.data(model.index(row, column), role)


def headless(skill, wins: int, losses: int) -> VerificationRecord:
    return VerificationRecord(
        "2026-05-01T00:00:00.000Z", EvidenceKind.HEADLESS, wins, losses, opponent=HARD, body_hash=body_hash(skill)
    )


# --- 1. contradicted tiers ---------------------------------------------------------------------------


def test_a_contradicted_tier_is_flagged_in_the_badge_and_the_pane(qtbot, repository, browser) -> None:
    state, model, pane = browser
    weak = ai_skill(name="Balanced opening", quality=Quality(300, 0.37, None, Confidence.PROVEN))
    fine = ai_skill(name="Fine plan", quality=Quality(10, 0.9, None, Confidence.PROVEN))
    repository.create_many([(weak, [headless(weak, 111, 189)]), (fine, [headless(fine, 9, 1)])])
    model.reload()
    settle(qtbot, model)
    assert cell(model, weak.id, CONFIDENCE_COLUMN, CONTRADICTION_ROLE) is not None
    tooltip = cell(model, weak.id, CONFIDENCE_COLUMN, Qt.ItemDataRole.ToolTipRole)
    assert tooltip.startswith("Contradicted by this library's evidence: proven needs 10+ decided games above 70%")
    assert "To settle: demote to tentative" in tooltip
    assert cell(model, fine.id, CONFIDENCE_COLUMN, CONTRADICTION_ROLE) is None
    assert cell(model, fine.id, CONFIDENCE_COLUMN, Qt.ItemDataRole.ToolTipRole) is None

    text = show(qtbot, state, model, pane, weak.id)
    assert "⚠ contradicted" in text
    assert "proven needs 10+ decided games above 70%" in text and "To settle: demote to tentative" in text


def test_the_badge_paints_the_warning_mark(qtbot, repository, browser) -> None:
    _state, model, _pane = browser
    weak = ai_skill(name="Balanced opening", quality=Quality(300, 0.37, None, Confidence.PROVEN))
    fine = ai_skill(name="Fine plan", quality=Quality(10, 0.9, None, Confidence.PROVEN))
    repository.create_many([(weak, [headless(weak, 111, 189)]), (fine, [headless(fine, 9, 1)])])
    model.reload()
    settle(qtbot, model)
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.setItemDelegateForColumn(CONFIDENCE_COLUMN, QtConfidenceDelegate(view))
    view.setColumnWidth(CONFIDENCE_COLUMN, 160)
    view.resize(1400, 200)
    view.show()
    image = view.viewport().grab().toImage()

    def warned(skill_id: str) -> bool:
        rect = view.visualRect(model.index(model.row_of(skill_id), CONFIDENCE_COLUMN))
        return any(
            QColor(image.pixel(x, y)) == WARNING for x in range(rect.left(), rect.right()) for y in (rect.center().y(),)
        )

    assert warned(weak.id) and not warned(fine.id)


def test_the_flag_follows_new_evidence(qtbot, repository, browser, tmp_path: Path) -> None:
    state, model, pane = browser
    skill = ai_skill(name="Balanced opening", quality=Quality(9, 0.22, None, Confidence.ESTABLISHED))
    repository.create_many([(skill, [headless(skill, 2, 7)])])
    model.reload()
    assert "⚠ contradicted" in show(qtbot, state, model, pane, skill.id)
    assert cell(model, skill.id, CONFIDENCE_COLUMN, CONTRADICTION_ROLE) is not None
    matches = tmp_path / "matches.jsonl"  # real games' outcomes, as an engine reports them
    match = {"skill_id": skill.id, "outcome": "win", "opponent": "kessler", "engine_version": "0.5.0"}
    matches.write_text(
        "".join(json.dumps({**match, "time": f"2026-06-0{day}T20:00:00Z"}) + "\n" for day in (1, 2, 3, 4))
    )
    record_plays(matches, repository)
    qtbot.waitUntil(lambda: cell(model, skill.id, CONFIDENCE_COLUMN, CONTRADICTION_ROLE) is None, timeout=WAIT)
    qtbot.waitUntil(
        lambda: "Gameplay matches" in pane.toPlainText() and "4 of 4 won" in pane.toPlainText(), timeout=WAIT
    )
    assert "contradicted" not in pane.toPlainText()


def test_the_flag_and_the_bars_follow_the_librarys_policy(qtbot, repository, browser) -> None:
    state, model, pane = browser
    skill = ai_skill(name="Nearly proven", quality=Quality(20, 0.65, None, Confidence.PROVEN))
    repository.create_many([(skill, [headless(skill, 13, 7)])])
    model.reload()
    text = show(qtbot, state, model, pane, skill.id)
    assert cell(model, skill.id, CONFIDENCE_COLUMN, CONTRADICTION_ROLE) is not None
    assert "proven needs 10+ decided games above 70%" in text
    repository.settings.set("thresholds.proven", 0.6)  # the library's own policy, as `config set` writes it
    qtbot.waitUntil(lambda: cell(model, skill.id, CONFIDENCE_COLUMN, CONTRADICTION_ROLE) is None, timeout=WAIT)
    qtbot.waitUntil(lambda: "contradicted" not in pane.toPlainText(), timeout=WAIT)
    assert "its bar is met by headless games only" in pane.toPlainText()


# --- 2. where each figure comes from ------------------------------------------------------------------


def test_claimed_figures_and_an_engines_figures_say_where_they_come_from(qtbot, tmp_path: Path, owner) -> None:
    claimed = ai_skill(name="Naval doctrine", quality=Quality(256, 0.8, None, Confidence.PROVEN))
    (tmp_path / "naval.icpkg").write_bytes(export_package([claimed], META))
    library = tmp_path / "lib.db"
    Database(library, create=True).close()
    assert cli(["import", "--db", str(library), str(tmp_path / "naval.icpkg")]) == 0
    with Database(library) as database:
        repository = SkillRepository(database, Actor("mira"))
        engine_row = repository.create(ai_skill(name="Engine row", quality=Quality(256, 0.8, None, Confidence.PROVEN)))
        state = BrowserState(repository, owner)
        model, pane = SkillTableModel(state, owner), QtDetailPane(state, owner)
        text = show(qtbot, state, model, pane, claimed.id)
        assert "Package's claim" in text
        assert "claimed by package kessler/ra1-naval@1.2.0: proven, 256 games at 80%" in text
        assert "nothing measured here yet" in text and "No verification sessions recorded in this library" in text
        text = show(qtbot, state, model, pane, engine_row.id)
        assert "80% over 256 games" in text
        assert "the library's row only: no verification sessions here back them" in text
        assert "not from this library's evidence: no sessions here" in text
        assert "Next tier" not in text  # Proven is the top tier
        model.shutdown()
        pane.shutdown()
        state.operations.wait()


def test_evidence_kinds_are_shown_apart_with_the_next_bar(qtbot, repository, browser) -> None:
    state, model, pane = browser
    skill = ai_skill(name="Candidate", quality=Quality(20, 0.6, None, Confidence.TENTATIVE))
    repository.create_many([(skill, [headless(skill, 12, 8)])])
    model.reload()
    text = show(qtbot, state, model, pane, skill.id)
    assert f"Headless games vs {HARD}: 12 of 20 won (60%, 95% 39%–78%) in 1 session: supports tentative" in text
    assert "Gameplay matches: none" in text
    assert "from this library's credited evidence (1 session)" in text
    assert (
        "Established needs gameplay evidence: 3+ decided games above 60% in recorded matches;"
        " headless games raise a skill no further than tentative (headless_max_tier)."
    ) in text


# --- 3. lift and compositions ---------------------------------------------------------------------------


def test_the_lift_and_the_compositions_show_by_name(qtbot, repository, browser) -> None:
    state, model, pane = browser
    rush = repository.create(ai_skill(name="Light tank rush at 5:00"))
    armor = repository.create(ai_skill(name="Transition to heavy armour at 12:00"))
    model.reload()
    text = show(qtbot, state, model, pane, rush.id)
    assert "Lift over the default plan" not in text and "Composes with" not in text
    # A baseline run's lift as the run stores it: the skill won 2 of 20 pairs, the default plan 14.
    run_id = start_run(repository.database, [rush], opponent=HARD, games=20, seed=4, options={"baseline": True})
    interval = newcombe_paired(PairedCounts(2, 0, 12, 6))
    lift = LiftRecord(run_id, rush.id, body_hash(rush), HARD, "0.5.0", 2, 0, 12, 6, 0, interval.low, interval.high)
    PairedRuns(repository.database).write_lifts(run_id, [lift])  # the pane follows the announced change
    qtbot.waitUntil(lambda: "worse than the default plan" in pane.toPlainText(), timeout=WAIT)
    assert "Lift over the default plan" in pane.toPlainText()
    assert "-60.0% [" in pane.toPlainText() and "over 20 pairs (skill 10%, default plan 70%)" in pane.toPlainText()

    repository.evidence.record_composition(rush.id, armor.id, successes=3)  # D057's skill_compositions
    qtbot.waitUntil(lambda: "Composes with" in pane.toPlainText(), timeout=WAIT)
    composes = pane.toPlainText().split("Composes with")[1]
    assert composes.lstrip().startswith("Transition to heavy armour at 12:00 (3 successful uses, plays first")
    assert f'href="skill:{armor.id}"' in pane.toHtml()
    assert armor.id not in pane.toPlainText().split("Risk findings")[0]  # names, never raw ids


# --- 4. refinements --------------------------------------------------------------------------------------


def test_refinements_and_their_originals_are_told_apart(qtbot, repository, browser) -> None:
    state, model, pane = browser
    original = repository.create(ai_skill(name="Rocket screen"))
    other = repository.create(ai_skill(name="Other plan"))
    model.reload()
    settle(qtbot, model)
    assert cell(model, original.id, NAME_COLUMN) == "Rocket screen"
    refined = repository.create(  # a person's refinement keeps the original's name
        ai_skill(name="Rocket screen", provenance=Provenance(Source.human_refined(original.id), "ra1", "0.5.0"))
    )
    qtbot.waitUntil(lambda: model.row_of(refined.id) is not None, timeout=WAIT)
    settle(qtbot, model)
    assert cell(model, original.id, NAME_COLUMN) == "[superseded] Rocket screen"
    assert cell(model, refined.id, NAME_COLUMN) == "[refinement] Rocket screen"
    assert cell(model, other.id, NAME_COLUMN) == "Other plan"
    assert "Superseded: refined by “Rocket screen”" in cell(
        model, original.id, NAME_COLUMN, Qt.ItemDataRole.ToolTipRole
    )
    assert "A person's refinement of “Rocket screen”" in cell(
        model, refined.id, NAME_COLUMN, Qt.ItemDataRole.ToolTipRole
    )

    show(qtbot, state, model, pane, refined.id)
    assert f'href="skill:{original.id}"' in pane.toHtml()
    assert "Refines Rocket screen: a person's refinement" in pane.toPlainText()
    show(qtbot, state, model, pane, original.id)
    assert f'href="skill:{refined.id}"' in pane.toHtml()
    assert "Superseded by Rocket screen" in pane.toPlainText()
    assert refined.id not in pane.toPlainText().split("Risk findings")[0]  # names, never raw ids

    repository.update(replace(repository.get(original.id), name="Rocket screen v1"))  # the link's name follows
    qtbot.waitUntil(
        lambda: "“Rocket screen v1”" in cell(model, refined.id, NAME_COLUMN, Qt.ItemDataRole.ToolTipRole), timeout=WAIT
    )


# --- 5. dates and figures never break ---------------------------------------------------------------------


_DATE = re.compile(r"\d{4}[-\u2011]\d\d[-\u2011]\d\d")


def split_tokens(pane: QtDetailPane) -> list[str]:
    """Dates, and "n of m won"-style figures, that the pane's layout broke over two lines."""
    document = pane.document()
    document.setTextWidth(pane.viewport().width())
    broken = []
    block = document.begin()
    while block.isValid():
        text, layout = block.text(), block.layout()
        ends = {layout.lineAt(i).textStart() for i in range(1, layout.lineCount())}
        for token in [*_DATE.finditer(text), *re.finditer(r"\d+ of \d+ won", text.replace("\u00a0", " "))]:
            if any(token.start() < end < token.end() for end in ends):
                broken.append(token.group())
        block = block.next()
    return broken


def test_dates_and_figures_never_wrap_in_their_middle(qtbot, repository, browser) -> None:
    state, model, pane = browser
    skill = ai_skill(name="Many sessions", quality=Quality(40, 0.6, None, Confidence.TENTATIVE))
    records = [
        replace(headless(skill, 6, 4), recorded_at=f"2026-03-1{day}T10:00:00.000Z", engine_version="0.5.0-long-build")
        for day in range(4)
    ]
    repository.create_many([(skill, records)])
    pane.setMinimumWidth(0)
    pane.resize(320, 900)
    pane.show()
    show(qtbot, state, model, pane, skill.id)
    # Each session's date cell is one line Qt may not break (it writes such a block back as <pre>).
    for day in range(4):
        assert re.search(f"<pre[^>]*>2026\u201103\u20111{day}</pre>", pane.toHtml())
    assert split_tokens(pane) == []
