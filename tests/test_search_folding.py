"""A search finds the same skills on both backends whatever their accents: SQLite's FTS5
(unicode61) is the reference, and a team library folds letters as it does (migration 15),
whatever the server database's locale."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from skillstudio.store import Actor, Database, SkillQuery, SkillRepository
from skillstudio.store.search_folding import fold, unicode61_folding
from tests.factories import ai_skill
from tests.postgres_server import PostgresServer

# (a skill's name, what finds it, what does not): as FTS5's unicode61 reads them.
CASES = (
    ("Café rush", ("cafe", "CAFÉ", "café", "cafe\u0301", "caf"), ("cafes", "caff")),
    ("Über push", ("uber", "ÜBER", "über"), ("ueber",)),
    ("Ångström line", ("angstrom", "ÅNGSTRÖM"), ("angstrem",)),
    ("Re\u0301sume\u0301 play", ("resume", "résumé", "RÉSUMÉ"), ("resumes",)),
    ("Łódź defence", ("łodz", "łódź", "ŁÓDŹ"), ("lodz",)),  # ł has no diacritic to drop
    ("Straße hold", ("straße", "STR"), ("strasse",)),  # ß stays ß
    ("ΣΟΦΊΑ tempo", ("σοφία", "ΣΟΦΊΑ"), ("σοφια",)),  # Greek accents are kept, case is not
)


def names_found(repository: SkillRepository, words: str) -> list[str]:
    return sorted(summary.name for summary in repository.summaries(repository.query(SkillQuery(text=words)).ids))


def check_cases(repository: SkillRepository) -> None:
    for name, _, _ in CASES:
        repository.create(ai_skill(name=name, description="plain words"))
    for name, finding, missing in CASES:
        for words in finding:
            assert names_found(repository, words) == [name], (name, words)
        for words in missing:
            assert names_found(repository, words) == [], (name, words)


def test_accents_and_case_find_the_same_skills_on_both_backends(library_target: str) -> None:
    with Database(library_target) as database:
        check_cases(SkillRepository(database, Actor("tester")))


def test_every_letter_unicode61_folds_is_found_by_its_base_letter(library_target: str) -> None:
    folding = unicode61_folding()
    assert len(folding.letters) > 300 and len(folding.dropped_marks) > 20  # read from SQLite, not empty
    # One word per letter (and per dropped mark, inside "ka<mark>b"), numbered so that each
    # query can match only its own word.
    words = [f"k{n}{letter}" for n, letter in enumerate(folding.letters)]
    words += [f"m{n}a{mark}b" for n, mark in enumerate(folding.dropped_marks)]
    with Database(library_target) as database:
        repository = SkillRepository(database, Actor("tester"))
        skill = repository.create(ai_skill(name="Alphabet", description=" ".join(words)))
        for n, base in enumerate(folding.bases):
            assert repository.query(SkillQuery(text=f"k{n}{base}")).ids == [skill.id], folding.letters[n]
            assert repository.query(SkillQuery(text=f"k{n}{folding.letters[n]}")).ids == [skill.id]
        for n, mark in enumerate(folding.dropped_marks):
            assert repository.query(SkillQuery(text=f"m{n}ab")).ids == [skill.id], hex(ord(mark))


def test_the_folding_is_unicode61s() -> None:
    assert fold("Café ÜBER naïve Straße résumé cafe\u0301 Ångström") == "cafe uber naive straße resume cafe angstrom"
    folding = unicode61_folding()
    assert len(folding.letters) == len(folding.bases) and folding.bases.isascii()


@pytest.mark.parametrize("locale", ["C", "C.UTF-8"])
def test_a_team_library_in_any_locale_reads_words_by_unicode(postgres_server: PostgresServer, locale: str) -> None:
    # Under LC_CTYPE "C" PostgreSQL's lower() and [:alnum:] knew ASCII only: "Über" was "ber".
    url = postgres_server.empty_database(locale=locale)
    try:
        with Database(url, create=True) as database:
            check_cases(SkillRepository(database, Actor("tester")))
    finally:
        postgres_server.drop(url)


OLD_SEARCH_WORDS = """
CREATE OR REPLACE FUNCTION studio_search_words(value TEXT) RETURNS TEXT
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT regexp_replace(lower(coalesce(value, '')), '[^[:alnum:]]+', ' ', 'g') $$
"""


def test_migration_15_makes_a_team_librarys_stored_words_again(postgres_server: PostgresServer) -> None:
    url = postgres_server.empty_database()
    try:
        with Database(url, create=True) as database:
            repository = SkillRepository(database, Actor("tester"))
            cafe = repository.create(ai_skill(name="Café rush"))
            with database.engine.begin() as connection:  # the library as migration 14 left it
                connection.exec_driver_sql(OLD_SEARCH_WORDS)
                connection.exec_driver_sql(
                    "UPDATE studio_skill_search AS s SET document = studio_skill_document(k.name, k.description, k.tags)"
                    " FROM skills AS k WHERE k.id = s.skill_id"
                )
                connection.execute(text("DELETE FROM studio_schema_migrations WHERE version >= 15"))
            assert repository.query(SkillQuery(text="cafe")).ids == []
        with Database(url) as database:  # opening migrates
            repository = SkillRepository(database, Actor("tester"))
            assert repository.query(SkillQuery(text="cafe")).ids == [cafe.id]
            assert repository.query(SkillQuery(text="café")).ids == [cafe.id]
    finally:
        postgres_server.drop(url)
