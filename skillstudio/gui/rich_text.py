"""The one HTML escaper for Qt rich text, and the HTML blocks more than one view shows."""

from __future__ import annotations

import html

from skillstudio.store import RiskFinding

SEVERITY_COLOUR = {"high": "#c62828", "medium": "#ef6c00", "low": "#1565c0", "info": "#607d8b"}


def escaped(value: object) -> str:
    """``value`` as text that Qt's rich-text labels show literally (quotes too, for attributes)."""
    return html.escape(str(value))


def findings_html(findings: list[RiskFinding]) -> str:
    """Risk findings as an HTML list (the review queue and the detail pane)."""
    if not findings:
        return '<p style="color:#2e7d32">No risk findings.</p>'
    rows = []
    for f in findings:
        colour = SEVERITY_COLOUR.get(f.severity, "#607d8b")
        where = f"{f.field} {f.start}–{f.end}" if f.end > f.start else f.field
        excerpt = f" <code>{escaped(f.excerpt)}</code>" if f.excerpt else ""
        rows.append(
            f'<li><b style="color:{colour}">{escaped(f.severity.upper())}</b> {escaped(f.reason)} '
            f'<span style="color:#707070">({escaped(f.rule)}; {escaped(where)})</span>{excerpt}</li>'
        )
    return "<ul>" + "".join(rows) + "</ul>"
