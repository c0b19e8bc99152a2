"""Where a tier and its figures come from and what would change them (``explain``), and the marks a
skill list shows beside a row (``page_marks``: contradicted tiers, refinements and their originals)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from skillstudio.model import Confidence, Provenance, Quality, Source
from skillstudio.model.evidence import EvidenceKind, VerificationRecord
from skillstudio.store import Database, SkillRepository, body_hash
from skillstudio.store.lineage import read_lineage
from skillstudio.verification.explain import explain
from skillstudio.verification.marks import page_marks
from skillstudio.verification.policy import VerificationPolicy
from skillstudio.verification.standing import standing_of
from tests.factories import ai_skill, content_skill
from tests.test_partial_provenance import REFINED_ID, engine_library  # noqa: F401 - a fixture

HARD = "IC Default Hard"
POLICY = VerificationPolicy()  # D057's numbers: headless evidence gives Tentative at most


def headless(skill, wins: int, losses: int, opponent: str = HARD) -> VerificationRecord:
    return VerificationRecord(
        "2026-05-01T00:00:00.000Z", EvidenceKind.HEADLESS, wins, losses, opponent=opponent, body_hash=body_hash(skill)
    )


def gameplay(skill, wins: int, losses: int) -> VerificationRecord:
    return VerificationRecord(
        "2026-06-01T00:00:00.000Z", EvidenceKind.GAMEPLAY, wins, losses, opponent="kessler", body_hash=body_hash(skill)
    )


def explained(repository: SkillRepository, skill, records, policy=POLICY, **kwargs):
    repository.create_many([(skill, records)])
    stored = repository.get(skill.id)
    return explain(stored, records, standing_of(repository, stored, policy), policy, **kwargs)


def test_a_tier_the_evidence_contradicts_says_so_and_what_would_settle_it(repository: SkillRepository) -> None:
    weak = ai_skill(quality=Quality(300, 0.37, None, Confidence.PROVEN))  # "proven at 37% over 300 games"
    explanation = explained(repository, weak, [headless(weak, 111, 189)])
    flag = explanation.contradiction
    assert flag is not None and flag.supported is Confidence.TENTATIVE
    assert "supports tentative" in explanation.tier_source
    assert "demote to tentative" in flag.advice
    [headless_line, gameplay_line] = explanation.evidence
    assert headless_line.label == f"Headless games vs {HARD}"
    assert headless_line.text.startswith("111 of 300 won (37%, 95% 32%–43%) in 1 session")
    assert gameplay_line.text == "none"


def test_an_engine_rows_figures_are_not_called_evidence(repository: SkillRepository) -> None:
    row_only = ai_skill(quality=Quality(256, 0.8, None, Confidence.PROVEN, "2026-03-15T10:00:00.000Z"))
    explanation = explained(repository, row_only, [])
    assert explanation.figures == "80% over 256 games, last verified 2026-03-15"
    assert explanation.figures_source.startswith("from the library's row only: no verification sessions here")
    assert explanation.tier_source.startswith("not from this library's evidence: no sessions here")
    assert explanation.contradiction is None  # no evidence here: nothing contradicts it either


def test_a_packages_claim_is_said_as_a_claim(repository: SkillRepository) -> None:
    imported = ai_skill(quality=Quality())  # an import stores no figures of its own
    claim = {"by": "kessler/naval@1.0.0", "confidence": "proven", "verification_count": 256, "success_rate": 0.8}
    explanation = explained(repository, imported, [], claim=claim)
    assert explanation.claim is not None
    assert explanation.claim.startswith("claimed by package kessler/naval@1.0.0: proven, 256 games at 80%")
    assert explanation.figures == "no decided games" and explanation.figures_source == "nothing measured here yet"


def test_figures_pooled_over_sessions_not_all_credited(repository: SkillRepository) -> None:
    skill = ai_skill(quality=Quality(30, 0.6, None, Confidence.TENTATIVE))
    records = [headless(skill, 12, 8), headless(skill, 6, 4, opponent="Classic RA Hard")]
    explanation = explained(repository, skill, records)
    assert "20 of the 30 games are credited" in explanation.figures_source
    assert explanation.tier_source.startswith("the starting tier; a candidate: headless vs IC Default Hard: 12/20")


def test_the_next_tier_follows_the_policy(repository: SkillRepository) -> None:
    skill = ai_skill(quality=Quality(20, 0.6, None, Confidence.TENTATIVE))
    records = [headless(skill, 12, 8)]
    capped = explained(repository, skill, records)
    assert capped.raise_by == (
        "Established needs gameplay evidence: 3+ decided games above 60% in recorded matches;"
        " headless games raise a skill no further than tentative (headless_max_tier)."
    )
    assert capped.lower_by is None  # Tentative is the floor
    trusting = VerificationPolicy(headless_max_tier=Confidence.PROVEN, established_games=5)
    stored = repository.get(skill.id)
    trusted = explain(stored, records, standing_of(repository, stored, trusting), trusting)
    assert trusted.raise_by == (
        f"Established needs 5+ decided games above 60%, in headless games against {HARD} or in gameplay."
    )


def test_a_tier_kept_from_headless_games_under_a_lower_cap_is_explained(repository: SkillRepository) -> None:
    skill = ai_skill(quality=Quality(20, 0.8, None, Confidence.PROVEN))
    explanation = explained(repository, skill, [headless(skill, 16, 4)])
    assert explanation.contradiction is None  # the figures meet Proven's bar
    assert explanation.tier_source.startswith("its bar is met by headless games only")
    assert "no further than tentative (headless_max_tier)" in explanation.tier_source
    assert "revalidation drops it to tentative" in (explanation.lower_by or "")
    demoting = VerificationPolicy(demote_on_verify=True)
    stored = repository.get(skill.id)
    assert "demote_on_verify is on" in (
        explain(stored, [], standing_of(repository, stored, demoting), demoting).lower_by or ""
    )


def test_gameplay_earns_a_tier_and_is_kept_apart(repository: SkillRepository) -> None:
    skill = ai_skill(quality=Quality(24, 0.75, None, Confidence.ESTABLISHED))
    explanation = explained(repository, skill, [headless(skill, 10, 10), gameplay(skill, 5, 2)])
    assert explanation.tier_source == "earned by this library's evidence: gameplay: 5/7 games won: 3+ above 60%"
    assert [line.label for line in explanation.evidence] == [f"Headless games vs {HARD}", "Gameplay matches"]
    assert explanation.raise_by is not None and explanation.raise_by.startswith("Proven needs gameplay evidence")


def test_content_skills_explain_plays(repository: SkillRepository) -> None:
    skill = content_skill(quality=Quality(0, 0.0, None, Confidence.PROVEN))
    explanation = explained(repository, skill, [])
    assert "no rule grants Proven to a content skill" in explanation.tier_source
    assert [line.label for line in explanation.evidence] == ["Content plays"]
    assert explanation.raise_by is None


def test_without_valid_settings_the_tier_is_shown_unchecked(repository: SkillRepository) -> None:
    skill = repository.create(ai_skill(quality=Quality(9, 0.5, None, Confidence.ESTABLISHED)))
    explanation = explain(skill, [], None, None, problem="thresholds.proven: must be between 0 and 1")
    assert explanation.problem == "thresholds.proven: must be between 0 and 1"
    assert explanation.tier_source == "stored in the library; not checked against the evidence"


# --- the marks of a page of rows ------------------------------------------------------------------


def test_page_marks_flag_contradicted_tiers_and_name_refinements(repository: SkillRepository) -> None:
    weak = ai_skill(name="Balanced opening", quality=Quality(300, 0.37, None, Confidence.PROVEN))
    original = ai_skill(name="Rocket screen")
    refined = ai_skill(
        name="Rocket screen", provenance=replace(original.provenance, source=Source.human_refined(original.id))
    )
    repository.create_many([(weak, [headless(weak, 111, 189)]), (original, []), (refined, [])])
    marks = page_marks(repository, repository.summaries([weak.id, original.id, refined.id]), POLICY)
    assert marks[weak.id].contradiction is not None and marks[weak.id].lineage == ""
    assert marks[weak.id].tier_text().startswith("Contradicted by this library's evidence: proven needs 10+")
    assert (marks[original.id].lineage, marks[refined.id].lineage) == ("superseded", "refinement")
    assert marks[original.id].lineage_text() == "Superseded: refined by “Rocket screen”"
    assert marks[refined.id].lineage_text() == "A person's refinement of “Rocket screen”"
    assert marks[refined.id].contradiction is None


def test_a_refinement_in_the_trash_supersedes_nothing(repository: SkillRepository) -> None:
    original = repository.create(ai_skill(name="Rocket screen"))
    refined = repository.create(
        ai_skill(name="Rocket screen", provenance=Provenance(Source.human_refined(original.id), "ra1", "0.5.0"))
    )
    assert read_lineage(repository.database, [original.id]).refinements == {original.id: (refined.id,)}
    repository.trash.delete(refined.id)
    assert page_marks(repository, repository.summaries([original.id]), POLICY) == {}


def test_an_engines_refinement_row_without_its_original_is_marked_unknown(engine_library: Path) -> None:  # noqa: F811
    with Database(engine_library) as database:
        repository = SkillRepository(database)
        marks = page_marks(repository, repository.summaries([REFINED_ID]), POLICY)
    assert marks[REFINED_ID].lineage == "refinement"
    assert marks[REFINED_ID].lineage_text() == "A person's refinement of an original the row does not name"
