"""SkillStudio: curate, verify and share libraries of LLM skills in the D057 format."""

__version__ = "0.1.0"
