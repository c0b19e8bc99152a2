"""Verification batches, D057's promotion and decay policy, and play records. Qt-free.

* :mod:`.policy`: the one promotion/decay policy (D057's numbers by default);
* :mod:`.stats`: Wilson 95% intervals;
* :mod:`.runner`: the batch runner, a generator of progress events (cancellable, resumable);
* :mod:`.executors`: in-process, local worker processes, Dask;
* :mod:`.content`: EncounterPattern checks against the scene templates;
* :mod:`.plays`: ``record PLAYS.jsonl``;

docs/verification.md describes the rules.
"""

from skillstudio.verification.policy import DEFAULT_POLICY, Assessment, VerificationPolicy, audit_action
from skillstudio.verification.stats import Interval, wilson

__all__ = ["DEFAULT_POLICY", "Assessment", "Interval", "VerificationPolicy", "audit_action", "wilson"]
