"""Headless verification of AI skills: the reference skirmish engine and the engine protocol.

Qt-free. Two ways to play a batch of games for a skill's StrategicPattern:

* in process: ``run_batch(skill, "IC Default Hard", games, seed)`` -> :class:`BatchResult`
  (numpy arrays per game), the built-in reference engine (docs/reference-engine.md); the games
  start from the skill's SituationSignature (``situation=`` overrides it, ``STANDARD`` is the
  standard opening);
* through a process: ``ProcessEngine(argv, timeout_s).run(Job.for_skill(...))`` -> one
  :class:`GameResult` per game, for any engine speaking the protocol (docs/engine-protocol.md);
  ``python -m skillstudio.engine`` is the reference engine behind it.
"""

from skillstudio.engine.batch import (
    ENGINE_NAME,
    ENGINE_VERSION,
    BatchError,
    BatchRequest,
    BatchResult,
    NotAStrategySkill,
    engine_version,
    run_batch,
    run_batches,
)
from skillstudio.engine.doctrine import PARAMETERS, Doctrine, ParameterSpec, default_plan
from skillstudio.engine.module import GameModule, Mix, available_modules, load_module, parse_module
from skillstudio.engine.opponents import Opponent, UnknownOpponentError, opponent_names, parse_opponent
from skillstudio.engine.protocol import (
    PROTOCOL_VERSION,
    EngineError,
    Job,
    ProcessEngine,
    ProtocolVersionError,
    reference_engine_argv,
)
from skillstudio.engine.results import GameResult, Timeline
from skillstudio.engine.rng import derive_seeds
from skillstudio.engine.situation import STANDARD, Situation, SituationError, situation_from_signature
from skillstudio.engine.tuning import DEFAULT_TUNING, Tuning

__all__ = [
    "DEFAULT_TUNING",
    "ENGINE_NAME",
    "ENGINE_VERSION",
    "PARAMETERS",
    "PROTOCOL_VERSION",
    "STANDARD",
    "BatchError",
    "BatchRequest",
    "BatchResult",
    "Doctrine",
    "EngineError",
    "GameModule",
    "GameResult",
    "Job",
    "Mix",
    "NotAStrategySkill",
    "Opponent",
    "ParameterSpec",
    "ProcessEngine",
    "ProtocolVersionError",
    "Situation",
    "SituationError",
    "Timeline",
    "Tuning",
    "UnknownOpponentError",
    "available_modules",
    "default_plan",
    "derive_seeds",
    "engine_version",
    "load_module",
    "opponent_names",
    "parse_module",
    "parse_opponent",
    "reference_engine_argv",
    "run_batch",
    "run_batches",
    "situation_from_signature",
]
