"""The detail pane: everything about the selected skill, one click from the table.

Skill text comes from agents and strangers' packages, so every value is HTML-escaped before
it reaches the rich-text view. Links to other skills use ``skill:<id>`` URLs and are
announced through ``skill_activated`` for the browser to select.

Beside every tier and figure the pane says where it comes from (this library's evidence, kind
by kind; a package's claim; an engine's row) and what would change it, in the core's words
(:func:`skillstudio.verification.explain.explain`); a tier the evidence contradicts is flagged
with what would settle it. Dates and figures never wrap in their middle.

The pane shows ``BrowserState.current``. The page is built off the GUI thread (a dozen reads:
revisions, verifications, standing, lift, compositions, vectors, risk findings) and re-read
when a write touches the skill or a skill it links to, and when the library's settings (its
policy) change; when the skill leaves the library, the pane says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer, QUrl, Signal
from PySide6.QtWidgets import QTextBrowser, QWidget

from skillstudio.gui.workers import LatestOnly, readable
from skillstudio.model import (
    EncounterPattern,
    Instructions,
    Skill,
    SourceKind,
    StrategicPattern,
    ValidationError,
    VerifiedExample,
)
from skillstudio.model.claims import claim_in
from skillstudio.model.evidence import VerificationRecord
from skillstudio.store import AuditAction, ChangeKind, InvalidStoredSkill, LibraryChange, LibraryError, SkillRepository
from skillstudio.verification.explain import Explanation, explain
from skillstudio.verification.lift import describe, latest_lifts
from skillstudio.verification.policy import policy_for
from skillstudio.verification.standing import standings

if TYPE_CHECKING:
    from skillstudio.gui.browser_state import BrowserState
    from skillstudio.verification.compositions import PartnerComposition

_STYLE = """
<style>
h2 { margin: 0 0 4px 0; }
h3 { margin: 14px 0 4px 0; color: #37474f; }
table { border-collapse: collapse; }
td, th { padding: 1px 8px 1px 0; vertical-align: top; }
th { text-align: left; color: #546e7a; font-weight: normal; }
.badge { color: white; padding: 1px 6px; }
.muted { color: #78909c; }
.problem { color: #b00020; }
pre { white-space: pre-wrap; }
p.note { margin: 3px 0; }
</style>
"""
NB_HYPHEN = "\u2011"  # dates must not wrap at their hyphens
NOWRAP = "white-space:nowrap"  # a table cell Qt must not break inside, however narrow the pane
# Dates, intervals and "12 of 20 won"-style figures: read as one token, never split over lines.
_UNBROKEN = re.compile(
    r"\d{4}-\d\d-\d\d(?: \d\d:\d\d)?"
    r"|95% \d+%–\d+%"
    r"|\[[-+\d.%, ]+\]"
    r"|[+-]?\d+(?:\.\d+)?%?(?: of \d+)?(?: (?:decided )?(?:games?|plays?|pairs|sessions?|times|won|dimensions))"
    r"|\d(?:\.\d+)? / \d+"
)
_BADGE = {"tentative": "#9a6b00", "established": "#0060a8", "proven": "#007a55"}
FOLLOW_CHANGES_MS = 50  # changes arriving within this re-read the skill once


def _e(value: object) -> str:
    return escape(str(value))


def _keep(text: str) -> str:
    """``text`` escaped, its dates and figures joined so that no line break splits them."""
    return _UNBROKEN.sub(lambda found: found.group().replace(" ", "\u00a0").replace("-", NB_HYPHEN), _e(text))


def _rows(pairs: list[tuple[str, str]]) -> str:
    """A two-column table; values must already be escaped HTML."""
    return "<table>" + "".join(f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in pairs) + "</table>"


def _composition(pairs: tuple[tuple[str, int], ...]) -> str:
    return ", ".join(f"{_e(unit)} {share}%" for unit, share in pairs) or '<span class="muted">none</span>'


_PLACEHOLDER = _STYLE + '<p class="muted">Select a skill to see everything about it.</p>'
_LOADING = _STYLE + '<p class="muted">Loading…</p>'
# How a skill left the library, by the write that removed it (typed: never the action's spelling).
_LEFT_BY = {
    AuditAction.DELETE: "was moved to the trash",
    AuditAction.PRUNE: "was pruned (moved to the trash)",
    AuditAction.PURGE: "was deleted for good",
    AuditAction.IMPORT: "was replaced by an import (moved to the trash)",
}
_SHOWN_KINDS = ChangeKind.CONTENT | ChangeKind.QUALITY | ChangeKind.REVIEW | ChangeKind.RUNS | ChangeKind.VECTORS


@dataclass(frozen=True)
class Page:
    """A rendered skill: the HTML body, and the other skills it links to (their names show)."""

    skill_id: str
    html: str
    linked: frozenset[str] = frozenset()
    found: bool = True  # False: the skill could not be read (gone, or not a valid skill)


def render_page(repository: SkillRepository, skill_id: str) -> Page:
    """Everything about a skill as escaped HTML; runs off the GUI thread (a dozen reads)."""
    try:
        skill = repository.get(skill_id)
    except InvalidStoredSkill as error:
        problems = "".join(f"<li>{_e(issue)}</li>" for issue in error.issues)
        return Page(
            skill_id,
            f'<h2>{_e(skill_id)}</h2><p class="problem">This row in the library is not a valid '
            f"skill (another program may have written it):</p><ul>{problems}</ul>",
            found=False,
        )
    except LibraryError as error:
        return Page(skill_id, f'<p class="problem">{_e(error)}</p>', found=False)
    return _Renderer(repository).render(skill)


class QtDetailPane(QTextBrowser):
    """Shows ``state.current``, read in the background; follows the library's changes to it."""

    skill_activated = Signal(str)

    def __init__(self, state: BrowserState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.skill_id: str | None = None  # shown, or being read
        self._page: Page | None = None
        self._left: LibraryChange | None = None  # the change that took the shown skill away
        self._loader = LatestOnly(self, self._show_page, self._show_failure)
        self._refresh_timer = QTimer(self, singleShot=True, interval=FOLLOW_CHANGES_MS)  # a burst: one read
        self._refresh_timer.timeout.connect(self.refresh)
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._follow)
        self.setMinimumWidth(320)
        state.current_changed.connect(self.show_skill)
        state.library_opened.connect(self._on_library_opened)
        state.library_changed.connect(self._on_library_changed)
        self.setHtml(_PLACEHOLDER)
        self.show_skill(state.current)

    @property
    def loading(self) -> bool:
        return self._loader.loading or self._refresh_timer.isActive()

    def show_skill(self, skill_id: str | None) -> None:
        """Show ``skill_id`` (read in the background), or the placeholder for None.

        A pane whose skill just left the library keeps saying so until another skill is chosen:
        the table lets go of the row at the same moment, and the notice should not vanish with it.
        """
        if skill_id is None and self._left is not None:
            return
        self._left = None
        self.skill_id = skill_id
        self._refresh_timer.stop()
        if skill_id is None:
            self._loader.discard()
            self._page = None
            self.setHtml(_PLACEHOLDER)
            return
        if self._page is None or self._page.skill_id != skill_id:
            self._page = None
            self.setHtml(_LOADING)
        self.refresh()

    def refresh(self) -> None:
        """Read the shown skill again (it changed, or the library was reloaded)."""
        self._refresh_timer.stop()
        repository = self.state.repository
        if self.skill_id is None or repository is None:
            return
        self._loader.request(render_page, repository, self.skill_id)

    def shutdown(self) -> None:
        """Before the library closes: drop what is pending, let a running read finish unseen."""
        self._refresh_timer.stop()
        self._loader.discard()
        self._loader.wait()

    def _show_page(self, page: Page) -> None:
        if page.skill_id != self.skill_id:
            return
        if self._left is not None and not page.found:
            return  # still gone: the notice says more than "not found"
        self._left = None
        self._page = page
        self._set_body(page.html)

    def _show_failure(self, error: BaseException) -> None:
        self._set_body(f'<p class="problem">This skill cannot be shown: {_e(readable(error))}</p>')

    def _set_body(self, html: str) -> None:
        bar = self.verticalScrollBar()
        position = bar.value()  # a refresh of the same skill keeps the reader's place
        self.setHtml(_STYLE + html)
        bar.setValue(position)

    def _on_library_opened(self, _repository: SkillRepository) -> None:
        self.shutdown()
        self._left = None
        self.show_skill(None)

    def _on_library_changed(self, change: LibraryChange) -> None:
        skill_id = self.skill_id
        if skill_id is None:
            return
        if change.removes(skill_id):
            self._refresh_timer.stop()
            self._loader.discard()
            self._left = change
            what = _LEFT_BY.get(change.action, "was removed")
            notice = f'<p class="problem"><b>This skill left the library:</b> it {what} by {_e(change.actor)}.</p>'
            self._set_body(notice + (self._page.html if self._page is not None else ""))
            return
        # Also when the skill comes back (a restore, an undo): the page replaces the notice.
        mine = skill_id in change.skill_ids and change.touches(_SHOWN_KINDS | ChangeKind.MEMBERSHIP)
        linked = self._page is not None and not self._page.linked.isdisjoint(change.skill_ids)
        policy = change.touches(ChangeKind.SETTINGS)  # the tier's explanation follows the policy
        if (mine or linked or policy) and not self._refresh_timer.isActive():
            self._refresh_timer.start()

    def _follow(self, url: QUrl) -> None:
        if url.scheme() == "skill":
            self.skill_activated.emit(url.path())


class _Renderer:
    """Builds a skill's page from the library; plain Python, safe on any thread."""

    def __init__(self, repository: SkillRepository) -> None:
        self.repository = repository
        self.linked: set[str] = set()

    def render(self, skill: Skill) -> Page:
        html = self._render(skill)
        return Page(skill.id, html, frozenset(self.linked))

    def _link(self, skill_id: str, names: dict[str, str]) -> str:
        self.linked.add(skill_id)
        name = names.get(skill_id)
        if name is None:
            return '<span class="muted">a skill no longer in this library</span>'
        return f'<a href="skill:{_e(skill_id)}">{_e(name)}</a>'

    # --- rendering -------------------------------------------------------------------------------

    def _render(self, skill: Skill) -> str:
        # Imported here, off the GUI thread: compositions bring the engine (numpy), which the
        # window's first paint does not need.
        from skillstudio.verification.compositions import compositions_of

        repository = self.repository
        refinements = repository.refinements_of(skill.id)
        compositions = compositions_of(repository, skill.id)
        records = repository.evidence.verifications(skill.id)
        source = skill.provenance.source
        original = source.original_id
        linked = {c.partner_id for c in compositions} | set(refinements) | ({original} if original else set())
        if isinstance(skill.body, Instructions):
            linked |= set(skill.body.references)
        names = {s.id: s.name for s in repository.summaries(sorted(linked))}
        explanation = self._explanation(skill, records)
        colour = _BADGE.get(explanation.tier.value, "#707070")
        flag = ' <span class="problem"><b>⚠ contradicted</b></span>' if explanation.contradiction else ""
        parts = [
            f"<h2>{_e(skill.name)}</h2>",
            (
                f'<p><span class="badge" style="background:{colour}">&nbsp;{_e(explanation.tier.value)}&nbsp;</span>'
                f"{flag} &nbsp;{_e(skill.domain.label)} · {_e(skill.game_module)} · {_e(skill.body_kind.label)}</p>"
            ),
            self._lineage(skill, refinements, names),
            f"<p>{_e(skill.description) or '<span class=muted>No description.</span>'}</p>",
            "<p><b>Tags:</b> "
            + (", ".join(_e(t) for t in skill.tags) or '<span class="muted">untagged</span>')
            + "</p>",
        ]
        provenance = [("Source", _e(source.kind.label))]
        if source.kind is SourceKind.WORKSHOP:
            provenance.append(("Package", f"{_e(source.source_id)} by {_e(source.author)}"))
        provenance += [
            ("Created", f"{_keep(skill.created_at[:16].replace('T', ' '))} by {_e(skill.created_by)}"),
            ("LLM model", _e(skill.provenance.model_id or "—")),
            ("Embedding", self._embedding(skill.id)),
            ("Engine", _e(skill.provenance.engine_version or "—")),
            ("Review", _e(skill.review_state.label if skill.review_state else "not reviewed")),
            ("Revisions", str(len(repository.history.revisions(skill.id)))),
            ("Used", _keep(f"{skill.use_count} times" + (f", last {skill.last_used[:10]}" if skill.last_used else ""))),
        ]
        parts += ["<h3>Provenance</h3>", _rows(provenance)]
        parts += ["<h3>Quality</h3>", self._quality(skill, explanation), self._history(records)]
        if compositions:
            parts += ["<h3>Composes with</h3>", self._compositions(compositions, names)]
        parts += ["<h3>" + _e(skill.body_kind.label) + "</h3>", self._body(skill, names)]
        parts.append(self._import_extras(skill.id))
        parts.append(self._risk_findings(skill))
        return "".join(parts)

    def _lineage(self, skill: Skill, refinements: list[str], names: dict[str, str]) -> str:
        """A refinement keeps its original's name: say which is which, with links by name."""
        lines = []
        source = skill.provenance.source
        if source.kind is SourceKind.HUMAN_REFINED or source.original_id:
            original = (
                self._link(source.original_id, names)
                if source.original_id
                else '<span class="muted">an original the library does not name</span>'
            )
            lines.append(f"Refines {original}: a person's refinement, with evidence of its own")
        if refinements:
            lines.append(
                "Superseded by " + ", ".join(self._link(r, names) for r in refinements) + ", a person's refinement"
            )
        return "".join(f"<p><i>{line}</i></p>" for line in lines)

    def _explanation(self, skill: Skill, records: list[VerificationRecord]) -> Explanation:
        extras = self.repository.extras.get(skill.id)
        claim = claim_in(extras.frontmatter) if extras is not None else None
        try:
            policy = policy_for(self.repository.database)
        except ValidationError as error:
            problem = f"The settings are not valid, so tiers are not checked against the evidence: {error}"
            return explain(skill, records, None, None, claim=claim, problem=problem)
        standing = standings(self.repository, [skill.id], policy, skills={skill.id: skill}).get(skill.id)
        return explain(skill, records, standing, policy, claim=claim)

    def _quality(self, skill: Skill, explanation: Explanation) -> str:
        """The tier and each figure with its source, and what would change the tier."""
        rows = [("Tier", f"{_e(explanation.tier.value)} — {_keep(explanation.tier_source)}")]
        contradiction = explanation.contradiction
        if contradiction is not None:
            flagged = f'<span class="problem">{_keep(contradiction.reason)}.</span>'
            rows.append(("⚠ Contradicted", f"{flagged} <b>To settle</b>: {_keep(contradiction.advice)}."))
        if explanation.problem:
            rows.append(("Not checked", f'<span class="problem">{_e(explanation.problem)}</span>'))
        rows.append(
            (
                "Figures",
                f'{_keep(explanation.figures)} <span class="muted">— {_keep(explanation.figures_source)}</span>',
            )
        )
        rows += [(line.label, _keep(line.text)) for line in explanation.evidence]
        if explanation.claim:
            rows.append(("Package's claim", _keep(explanation.claim)))
        lift = self._lift(skill)
        if lift:
            rows.append(("Lift over the default plan", lift))
        if explanation.raise_by:
            rows.append(("Next tier", _keep(explanation.raise_by)))
        if explanation.lower_by:
            rows.append(("Lower tier", _keep(explanation.lower_by)))
        # Labelled paragraphs, not a table: long labels would squeeze the values in a narrow pane.
        return "".join(f'<p class="note"><b>{_e(label)}</b>: {value}</p>' for label, value in rows)

    def _lift(self, skill: Skill) -> str:
        """The latest lift over the module's default plan, flagged when wholly below zero."""
        found = latest_lifts(self.repository, [skill.id])
        if not found:
            return ""
        latest = found[0]
        text = _keep(describe(latest.lift))
        if latest.lift.worse:
            text = f'<span class="problem">{text}</span>'
        notes = [f"measured {latest.lift.computed_at[:10]}"] if latest.lift.computed_at else []
        if not latest.current_body:
            notes.append("with an earlier body")
        return text + (f' <span class="muted">({_keep(", ".join(notes))})</span>' if notes else "")

    def _compositions(self, compositions: list[PartnerComposition], names: dict[str, str]) -> str:
        items = []
        for c in compositions:
            uses = f"{c.success_count} successful uses" if c.success_count else "no successful uses yet"
            # Which one plays first means something once the pair was used or run, not for a bare link.
            details = [uses + (", plays first" if c.first and (c.success_count or c.runs) else "")]
            if c.decided:
                details.append(
                    f"composition runs: {c.wins} of {c.decided} won ({c.wins / c.decided:.0%}) in {c.runs} runs"
                )
            elif c.runs:
                details.append(f"{c.runs} composition runs, no decided games")
            if c.composable:
                details.append("composable")
            items.append(
                f"<li>{self._link(c.partner_id, names)} <span class='muted'>({_keep('; '.join(details))})</span></li>"
            )
        return f"<ul>{''.join(items)}</ul>"

    def _embedding(self, skill_id: str) -> str:
        """Whether retrieval has a vector for the skill, and from which model (escaped HTML)."""
        try:
            info = self.repository.embeddings.info(skill_id)
        except Exception:  # noqa: BLE001 - derived data: never let it break the pane
            return '<span class="muted">unknown (the vectors cannot be read)</span>'
        if info is None:
            return '<span class="muted">none</span>'
        size = f"{info.dimensions} dimensions" if info.dimensions is not None else "malformed vector"
        if not info.current:
            return f'<span class="problem">stale (description changed)</span> — {_e(info.model_id)}, {size}'
        if not info.label_current:
            return f'{_e(info.model_id)}, {size}; <span class="problem">name/tags vector missing or stale</span>'
        return f"{_e(info.model_id)}, {size}"

    def _risk_findings(self, skill: Skill) -> str:
        """What the risk linter finds (stored with the skill; docs/review.md), if anything.

        A skill that was never linted, or changed since (an import, an engine), is linted now,
        so the pane never shows a clean bill for text nobody checked.
        """
        from skillstudio.review.workflow import findings_for

        try:
            findings = findings_for(self.repository, skill)
        except LibraryError:
            findings = self.repository.findings.get(skill.id)
        if not findings:
            return ""
        from skillstudio.gui.rich_text import findings_html

        return f"<h3>Risk findings ({len(findings)})</h3>" + findings_html(findings)

    def _import_extras(self, skill_id: str) -> str:
        """Where an imported skill came from, what spec problems it had, which files came along."""
        extras = self.repository.extras.get(skill_id)
        if extras is None or not (extras.origin or extras.warnings or extras.files):
            return ""
        parts = ["<h3>Imported</h3>"]
        if extras.origin:
            parts.append(f"<p>From {_e(extras.origin)}</p>")
        if extras.warnings:
            items = "".join(f'<li class="problem">{_e(warning)}</li>' for warning in extras.warnings)
            parts.append(f"<p><b>Warnings from the import</b> (kept, for review):</p><ul>{items}</ul>")
        if extras.files:
            parts.append("<p><b>Files</b>: " + ", ".join(_e(name) for name in sorted(extras.files)) + "</p>")
        return "".join(parts)

    def _history(self, records: list[VerificationRecord]) -> str:
        if not records:
            return '<p class="muted">No verification sessions recorded in this library.</p>'
        rows = "".join(
            f'<tr><td style="{NOWRAP}">{_keep(r.recorded_at[:10])}</td><td>{_e(r.kind.value)}</td>'
            f"<td>{_e(r.opponent or '')}</td>"
            f'<td style="{NOWRAP}">{r.wins}W {r.losses}L {r.draws}D{f" {r.errors}E" if r.errors else ""}</td>'
            f"<td>{'' if r.rating is None else f'{r.rating:.2f}★'}</td><td>{_e(r.engine_version)}</td></tr>"
            for r in records
        )
        return f"<p><b>Sessions in this library</b> ({len(records)})</p><table>{rows}</table>"

    def _body(self, skill: Skill, names: dict[str, str]) -> str:
        body = skill.body
        if isinstance(body, StrategicPattern):
            situation, plan = body.situation, body.plan
            guidance, risk = plan.economic_guidance, plan.risk_assessment
            targets = "".join(
                f"<li>{_e(t.target_type.label)} (priority {t.priority}): {_e(t.description)}"
                + (f" <span class='muted'>at {t.position.x}, {t.position.y}</span>" if t.position else "")
                + "</li>"
                for t in plan.priority_targets
            )
            bindings = ", ".join(f"{_e(name)} = {value}" for name, value in body.parameter_bindings)
            return (
                "<p><b>Situation</b></p>"
                + _rows(
                    [
                        ("Phase", _e(situation.game_phase.label)),
                        ("Economy", _e(situation.economy_state.label)),
                        ("Our army", _composition(situation.army_composition)),
                        ("Enemy (estimate)", _composition(situation.enemy_composition_estimate)),
                        ("Map control", f"{situation.map_control:.0%}"),
                        ("Threat", _e(situation.threat_level.label)),
                        ("Tech", _e(", ".join(situation.active_tech) or "—")),
                    ]
                )
                + "<p><b>Plan</b></p>"
                + _rows(
                    [
                        ("Build focus", _e(plan.build_focus.label)),
                        (
                            "Economy",
                            f"{'expand, ' if guidance.expand else ''}{guidance.harvester_target} harvesters"
                            + (
                                f"; build first: {_e(', '.join(guidance.priority_builds))}"
                                if guidance.priority_builds
                                else ""
                            )
                            + (
                                f"; sell: {_e(', '.join(guidance.sell_structures))}" if guidance.sell_structures else ""
                            ),
                        ),
                        (
                            "Risk",
                            f"{_e(risk.threat_level.label)} threat, {_e(risk.time_pressure.label.lower())} time pressure"
                            + (
                                f", from {_e(risk.expected_attack_direction)}" if risk.expected_attack_direction else ""
                            ),
                        ),
                        ("Defense", _e(risk.recommended_defense or "—")),
                        ("Confidence", f"{plan.confidence} / 1000"),
                    ]
                )
                + (f"<p><b>Targets</b></p><ol>{targets}</ol>" if targets else "")
                + f"<p><b>Reasoning</b></p><p>{_e(plan.reasoning)}</p>"
                + f"<p><b>Parameter bindings</b>: {bindings or '<span class=muted>none</span>'}</p>"
            )
        if isinstance(body, EncounterPattern):
            scenes = "".join(
                f"<li><b>{_e(scene.template)}</b>"
                + (
                    "<table>"
                    + "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in scene.values.items())
                    + "</table>"
                    if scene.values
                    else ""
                )
                + "</li>"
                for scene in body.scene_composition
            )
            hints = body.mission_structure
            return f"<ol>{scenes}</ol>" + _rows(
                [
                    ("Mission type", _e(hints.mission_type or "—")),
                    ("Faction", _e(hints.player_faction or "—")),
                    ("Difficulty", _e(hints.difficulty or "—")),
                    ("Length", f"{hints.estimated_minutes} min" if hints.estimated_minutes else "—"),
                    ("Objectives", _e("; ".join(hints.objectives) or "—")),
                    ("Outcomes", _e(", ".join(hints.outcomes) or "—")),
                    ("Notes", _e(hints.notes or "—")),
                ]
            )
        if isinstance(body, VerifiedExample):
            return (
                f"<p><b>Prompt context</b></p><pre>{_e(body.prompt_context)}</pre>"
                f"<p><b>Response</b></p><pre>{_e(body.response)}</pre>"
            )
        if isinstance(body, Instructions):
            references = ", ".join(self._link(r, names) for r in body.references)
            return (
                _rows(
                    [
                        ("Tools", _e(", ".join(body.tools) or "all")),
                        ("Model", _e(body.model or "default")),
                        ("Builds on", references or "—"),
                    ]
                )
                + f"<pre>{_e(body.instructions)}</pre>"
            )
        return ""
