"""What only a server library has: opening by URL, connection errors, the server's write lock,
cancelling a statement on the server, and writers on several connections (machines)."""

from __future__ import annotations

import threading
from dataclasses import replace

import psycopg
import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import make_url

from skillstudio.cli.main import main
from skillstudio.library import create_library, open_library
from skillstudio.library.sample import load_sample
from skillstudio.model import Confidence, Domain
from skillstudio.store import (
    Actor,
    Cancellation,
    ConflictError,
    Database,
    LibraryBusy,
    LibraryError,
    LibraryNotFound,
    NotALibrary,
    SkillQuery,
    SkillRepository,
    SortKey,
    StorageError,
)
from skillstudio.store.backends import CHANGE_CHANNEL
from skillstudio.store.backends.postgresql import WRITE_LOCK_KEY, mask, tsquery
from skillstudio.store.migrations import LATEST_VERSION
from tests.factories import ai_skill
from tests.outside import another_program
from tests.postgres_server import PASSWORD_ROLE, PostgresServer


@pytest.fixture
def empty_url(postgres_server: PostgresServer):
    url = postgres_server.empty_database()
    yield url
    postgres_server.drop(url)


@pytest.fixture
def library_url(postgres_server: PostgresServer):
    url = postgres_server.library_database()
    yield url
    postgres_server.drop(url)


def test_a_url_opens_creates_and_refuses_like_a_path(empty_url: str) -> None:
    with pytest.raises(NotALibrary, match="holds no skill library"):
        Database(empty_url)  # an empty database is not created into unasked
    with Database(empty_url, create=True) as database:
        assert database.dialect == "postgresql"
        with another_program(database) as other:
            versions = list(other.execute(text("SELECT version FROM studio_schema_migrations ORDER BY 1")).scalars())
        assert versions == list(range(1, LATEST_VERSION + 1))
    with pytest.raises(LibraryError, match="already holds a skill library"):
        Database(empty_url, create=True)
    with Database(empty_url) as database, pytest.raises(LibraryError, match="on a server, not in a file"):
        _ = database.path


def test_open_library_and_the_cli_take_a_url(empty_url: str, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    create_library(empty_url, sample=True).close()
    with open_library(empty_url) as database:
        assert SkillRepository(database).count() == len(load_sample())
    monkeypatch.setenv("SKILLSTUDIO_DB", empty_url)
    with open_library() as database:
        assert database.location == make_url(empty_url).render_as_string(hide_password=True)
    assert main(["stats", "--db", empty_url]) == 0
    assert empty_url in capsys.readouterr().out


def test_an_unreachable_server_is_named_with_the_reason_and_no_password(postgres_server: PostgresServer) -> None:
    port = make_url(postgres_server.admin_url).port
    with pytest.raises(LibraryNotFound) as caught:
        Database("postgresql+psycopg://someone:s3cret@127.0.0.1:1/team")
    message = str(caught.value)
    assert "127.0.0.1:1" in message and "refused" in message.lower() and "s3cret" not in message
    with pytest.raises(LibraryNotFound, match='database "no_such_library" does not exist'):
        Database(f"postgresql+psycopg://postgres@127.0.0.1:{port}/no_such_library")
    assert mask("postgresql+psycopg://someone:s3cret@host/db") == "postgresql+psycopg://someone:***@host/db"
    assert "s3cret" not in repr(open_target_error("postgresql://someone:s3cret@127.0.0.1:1/team"))


def open_target_error(url: str) -> LibraryError:
    try:
        Database(url)
    except LibraryError as error:
        return error
    raise AssertionError("opened")


def test_a_held_write_lock_is_busy_not_a_traceback(library_url: str) -> None:
    with Database(library_url, lock_wait=0.3) as database:
        repository = SkillRepository(database, Actor("tester"))
        skill = repository.create(ai_skill())
        url = make_url(library_url)
        with psycopg.connect(host=url.host, port=url.port, user=url.username, dbname=url.database) as other:
            other.execute("SELECT pg_advisory_lock(%s)", (WRITE_LOCK_KEY,))  # another writer, mid-transaction
            with pytest.raises(LibraryBusy, match="is busy: another program is writing"):
                repository.update(replace(skill, name="blocked"))
            assert repository.get(skill.id).name == skill.name  # reads are not blocked
        assert repository.update(replace(skill, name="free again")).name == "free again"


def test_writers_on_many_connections_never_lose_an_update(library_url: str) -> None:
    """Each writer reads, then saves what it read changed: a save based on a version another
    committed meanwhile is a conflict; every save that succeeded is in the history."""
    with Database(library_url) as first:
        skill = SkillRepository(first, Actor("seed")).create(ai_skill())
    saved: list[str] = []
    conflicts: list[str] = []

    def writer(number: int) -> None:
        with Database(library_url) as database:  # as on another machine: its own connections
            repository = SkillRepository(database, Actor(f"designer-{number}"))
            for round_ in range(6):
                current = repository.get(skill.id)
                try:
                    repository.update(replace(current, description=f"{number}.{round_}"))
                    saved.append(f"{number}.{round_}")
                except ConflictError:
                    conflicts.append(f"{number}.{round_}")

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    with Database(library_url) as database:
        repository = SkillRepository(database)
        final = repository.get(skill.id)
        updates = [r for r in repository.history.revisions(skill.id) if r.action == "update"]
    assert len(saved) + len(conflicts) == 36 and saved
    assert final.version == 1 + len(saved)  # each save moved the version once: none was lost
    assert len(updates) == len(saved)
    assert final.description in saved


def test_a_cancelled_read_stops_on_the_server_and_the_connection_reads_again(library_url: str) -> None:
    with Database(library_url) as database:
        repository = SkillRepository(database, Actor("tester"))
        repository.create_many([ai_skill() for _ in range(3)])
        started = threading.Event()

        def slow(connection, cursor, statement, *_args):  # the listing's statement runs for minutes
            if statement.lstrip().startswith("SELECT skills.id"):
                started.set()
                return statement.replace("FROM skills", "FROM skills, pg_sleep(300) AS pause", 1), _args[0]
            return statement, _args[0]

        event.listen(database.engine, "before_cursor_execute", slow, retval=True)
        cancellation = Cancellation()
        failures: list[BaseException] = []

        def read() -> None:
            try:
                repository.query(SkillQuery(), cancellation=cancellation)
            except LibraryError as error:
                failures.append(error)

        reader = threading.Thread(target=read)
        reader.start()
        assert started.wait(timeout=10)
        while reader.is_alive() and not failures:
            cancellation.cancel()
            reader.join(timeout=0.2)
        assert isinstance(failures[0], StorageError) and "interrupted" in str(failures[0])
        event.remove(database.engine, "before_cursor_execute", slow)
        for _ in range(3):  # every pooled connection reads normally again
            assert len(repository.query(SkillQuery()).ids) == 3


def test_search_words_become_prefix_terms_and_never_syntax() -> None:
    assert tsquery(["tank", "ar"], prefix=True) == "'tank':* & 'ar':*"
    assert tsquery(["tank_rush"], prefix=True) == "('tank' <-> 'rush':*)"
    assert tsquery(["Naval", "air"], prefix=True, weight="B", any_word=True) == "'naval':*B | 'air':*B"
    assert tsquery(["___"], prefix=True) == ""
    assert tsquery(["Café", "ÜBER"], prefix=True) == "'cafe':* & 'uber':*"  # folded as the stored words are


def test_search_on_a_server_has_fts5s_prefix_semantics(library_url: str) -> None:
    with Database(library_url) as database:
        repository = SkillRepository(database, Actor("tester"))
        tank = repository.create(ai_skill(name="Tank rush", description="armour early", tags=("anti-air",)))
        navy = repository.create(ai_skill(name="Naval raid", description="tankers at sea", tags=("naval",)))

        def search(words: str) -> list[str]:
            return repository.query(SkillQuery(text=words)).ids

        assert set(search("tank")) == {tank.id, navy.id}  # a prefix of "tankers" too
        assert search("tank ar") == [tank.id]  # every word required, each a prefix
        assert search("anti-air") == [tank.id]  # punctuation is never syntax
        assert search("ANTI") == [tank.id]
        assert search('"naval" OR -tank') == []  # words only: naval, or, tank all required
        assert search("tank")[0] == tank.id  # in the name: more relevant than in the description


def test_tag_filters_and_counts_run_in_a_parallel_query(library_url: str) -> None:
    """A big library's scans go parallel; the tag functions' EXCEPTION blocks (subtransactions)
    must then keep them in the leader instead of failing the query."""
    with Database(library_url) as database:
        repository = SkillRepository(database, Actor("tester"))
        tagged = repository.create(ai_skill(name="Tank rush", tags=("naval", "early")))
        repository.create(ai_skill(name="Plain", tags=()))
    url = make_url(library_url)
    with psycopg.connect(host=url.host, port=url.port, user=url.username, dbname=url.database) as connection:
        for setting in ("parallel_setup_cost = 0", "parallel_tuple_cost = 0", "min_parallel_table_scan_size = 0"):
            connection.execute(f"SET {setting}")
        connection.execute("SET force_parallel_mode = on")  # every plan that may go parallel does
        assert connection.execute("SELECT id FROM skills WHERE studio_tags_json(tags) ? 'naval'").fetchall() == [
            (tagged.id,)
        ]
        assert connection.execute("SELECT COUNT(*) FROM skills WHERE studio_untagged(tags)").fetchone() == (1,)
        counts = connection.execute("SELECT tag, COUNT(*) FROM skills, studio_tag_texts(tags) AS tag GROUP BY tag")
        assert sorted(counts.fetchall()) == [("early", 1), ("naval", 1)]


def _node_types(plan: dict) -> set[str]:
    return {plan["Node Type"]}.union(*(_node_types(child) for child in plan.get("Plans", [])))


@pytest.mark.parametrize("descending", [False, True], ids=["ascending", "descending"])
def test_every_browse_orders_first_page_walks_an_index_instead_of_sorting(library_url: str, descending: bool) -> None:
    """A first page of a million skills is read along the order's index until it is full; a
    Sort node would sort every (filtered) skill first (1.6 s for a descending use count at 1M),
    where an Incremental Sort reads the index in order and sorts only ties (20 ms). The planner
    is told sorting costs too much (enable_sort off), so it sorts only when no index gives the
    order as asked, NULLs last."""
    orders = [sort for sort in SortKey if sort is not SortKey.CREATED_BY]  # a join: no index on skills
    with Database(library_url) as database:
        repository = SkillRepository(database, Actor("tester"))
        repository.create(ai_skill(name="Tank rush"))
        statements: list[tuple[str, dict]] = []

        def keep(_connection, _cursor, statement, parameters, *_args) -> None:
            if "ORDER BY" in statement and "LIMIT" in statement:
                statements.append((statement, parameters))

        event.listen(database.engine, "before_cursor_execute", keep)
        for sort in orders:
            for filters in ({}, {"domains": (Domain.AI_STRATEGY,), "confidences": (Confidence.PROVEN,)}):
                repository.first_page(SkillQuery(sort=sort, descending=descending, **filters), 50)
    assert len(statements) == 2 * len(orders)
    url = make_url(library_url)
    sorted_orders = []
    with psycopg.connect(host=url.host, port=url.port, user=url.username, dbname=url.database) as connection:
        connection.execute("SET enable_sort = off")
        for statement, parameters in statements:
            plan = connection.execute(f"EXPLAIN (FORMAT JSON) {statement}", parameters).fetchone()[0][0]["Plan"]
            if "Sort" in _node_types(plan):
                sorted_orders.append(statement.split("ORDER BY", 1)[1])
    assert sorted_orders == [], "\n".join(sorted_orders)


def test_a_searchs_first_page_ranks_the_matches_once_when_ranks_tie_past_the_pool(library_url: str) -> None:
    """A common word often gives many matches the same rank; the pool a first page is chosen
    from is then ordered by name and id too, instead of being grown (every match ranked again)
    until the tie is inside it. The page is still the full order's beginning."""
    with Database(library_url) as database:
        repository = SkillRepository(database, Actor("tester"))
        # The same words in the same places: one rank for all; the names differ after them.
        repository.create_many([ai_skill(name=f"Tank rush {letter}") for letter in "qwertyuiopasdfgh"])
        rankings: list[str] = []

        def count(_connection, _cursor, statement, *_args) -> None:
            if "ts_rank" in statement:
                rankings.append(statement)

        event.listen(database.engine, "before_cursor_execute", count)
        page = repository.first_page(SkillQuery(text="tank"), 3)
        event.remove(database.engine, "before_cursor_execute", count)
        assert page == repository.query(SkillQuery(text="tank")).ids[:3]
    assert len(rankings) == 1


def test_a_statement_run_again_and_again_is_planned_for_its_own_values_each_time(library_url: str) -> None:
    """A search as it is typed runs one statement again and again: psycopg prepares it, and the
    server must not settle on one generic plan, blind to how many skills a word matches (that
    decides between the GIN index and reading them all: 0.8 s against 0.26 s at 1M)."""
    with Database(library_url) as database:
        repository = SkillRepository(database, Actor("tester"))
        repository.create_many([ai_skill(name=f"Tank rush {n}") for n in range(5)])
        for words in ["tank", "rush", "tank rush"] * 5:
            repository.first_page(SkillQuery(text=words), 3)
        with database.engine.connect() as connection:  # the pool's one connection, used by each
            plans = connection.exec_driver_sql(
                "SELECT SUM(generic_plans), SUM(custom_plans) FROM pg_prepared_statements WHERE strpos(statement, 'ts_rank') > 0"
            ).one()
    assert plans[0] == 0 and plans[1] > 0


def test_no_statement_is_jit_compiled_however_costly_the_planner_thinks_it(library_url: str) -> None:
    """A statement the planner costs above ``jit_above_cost`` would be compiled first, by the
    leader and each parallel worker: slower than running it, for these interactive reads. Here
    the threshold is lowered to 0, so every statement crosses it; a library's connections still
    compile none."""
    with Database(library_url) as database:
        repository = SkillRepository(database, Actor("tester"))
        repository.create_many([ai_skill(name=f"Tank rush {n}") for n in range(5)])
        url = make_url(library_url)
        with psycopg.connect(host=url.host, port=url.port, user=url.username, dbname=url.database) as plain:
            # True only where the server has a JIT compiler and the connection's jit is on
            if not plain.execute("SELECT pg_jit_available()").fetchone()[0]:  # type: ignore[index]
                pytest.skip("this PostgreSQL server compiles nothing (no llvmjit, or jit off in its settings)")
        with database.engine.connect() as connection:
            connection.exec_driver_sql("SET jit_above_cost = 0")
            plan = connection.exec_driver_sql(
                "EXPLAIN (ANALYZE, FORMAT JSON) SELECT skill_id, ts_rank(document, to_tsquery('simple', 'tank:*'))"
                " FROM studio_skill_search WHERE document @@ to_tsquery('simple', 'tank:*')"
            ).scalar_one()
            assert "JIT" not in plan[0], plan[0]["JIT"]
            assert connection.exec_driver_sql("SHOW jit").scalar_one() == "off"


def test_each_committed_write_moves_the_change_token_once_and_notifies(library_url: str) -> None:
    with Database(library_url) as database:
        repository = SkillRepository(database, Actor("tester"))
        url = make_url(library_url)
        with psycopg.connect(
            host=url.host, port=url.port, user=url.username, dbname=url.database, autocommit=True
        ) as listener:
            listener.execute(f"LISTEN {CHANGE_CHANNEL}")
            before = database.data_version()
            repository.create_many([ai_skill() for _ in range(20)])  # dozens of statements, one transaction
            assert database.data_version() == before + 1
            heard = list(listener.notifies(timeout=5, stop_after=1))
            assert [note.channel for note in heard] == [CHANGE_CHANNEL]
            with pytest.raises(ConflictError):  # a write that fails commits nothing, announces nothing
                skill = repository.get(repository.query(SkillQuery()).ids[0])
                repository.update(replace(skill, name="a"))
                repository.update(replace(skill, name="stale"))
            assert database.data_version() == before + 2  # the first update only


def test_a_server_restart_is_a_clear_error_then_the_library_reconnects(
    postgres_server: PostgresServer, library_url: str
) -> None:
    if postgres_server.data_dir is None:
        pytest.skip("the server is not this session's own cluster (SKILLSTUDIO_TEST_POSTGRES_URL): not restarted")
    with Database(library_url) as database:
        repository = SkillRepository(database, Actor("tester"))
        skill = repository.create(ai_skill())
        postgres_server.pg_ctl_run("stop")
        try:
            with pytest.raises(StorageError, match=r"lost the connection to the library .*refused"):
                repository.get(skill.id)
            with pytest.raises(StorageError, match="lost the connection"):
                database.data_version()
        finally:
            postgres_server.pg_ctl_run("start")
        assert repository.get(skill.id) == skill  # reconnected: nothing lost, nothing half-written
        assert repository.update(replace(skill, name="after the restart")).name == "after the restart"


def test_a_password_comes_from_libpq_and_a_wrong_one_is_refused_without_echo(
    postgres_server: PostgresServer, library_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    if postgres_server.data_dir is None:
        pytest.skip("the server is not this session's own cluster (SKILLSTUDIO_TEST_POSTGRES_URL)")
    with another_program(library_url) as admin:
        admin.execute(text(f"DROP ROLE IF EXISTS {PASSWORD_ROLE}"))
        admin.execute(text(f"CREATE ROLE {PASSWORD_ROLE} LOGIN SUPERUSER PASSWORD 'right-one'"))
    url = make_url(library_url).set(username=PASSWORD_ROLE).render_as_string(hide_password=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "no-pgpass"))  # the developer's ~/.pgpass stays out
    monkeypatch.delenv("PGPASSWORD", raising=False)
    with pytest.raises(LibraryNotFound, match="password") as caught:
        Database(url.replace(f"{PASSWORD_ROLE}@", f"{PASSWORD_ROLE}:wrong-one@"))
    assert "wrong-one" not in str(caught.value) and "***" in str(caught.value)
    monkeypatch.setenv("PGPASSWORD", "right-one")  # libpq's own ways: PGPASSWORD, ~/.pgpass, a service
    with Database(url) as database:
        assert SkillRepository(database).count() == 0
    monkeypatch.delenv("PGPASSWORD")
    pgpass = tmp_path / "pgpass"
    parsed = make_url(url)
    pgpass.write_text(f"{parsed.host}:{parsed.port}:*:{PASSWORD_ROLE}:right-one\n")
    pgpass.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    with Database(url) as database:
        assert SkillRepository(database).count() == 0
