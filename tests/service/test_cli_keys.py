"""``decido keys create|list|revoke`` through the one ``decido`` command (``main([...])``,
the service's commands loaded from their entry points) and the installed script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from decido.cli import main
from decido_service import keys
from decido_service.store.blocking import open_blocking


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "keys.db")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_create_prints_the_secret_once_with_a_warning(db: str, capsys) -> None:
    code, out, _ = run(capsys, "keys", "create", "--create", "--plan", "sdk", "--tier", "pro",
                       "--label", "acme", "--db", db)
    assert code == 0
    secrets_ = [w for w in out.split() if w.startswith("dk_")]
    assert len(secrets_) == 1 and keys.is_well_formed(secrets_[0])
    assert "shown only once" in out
    with open_blocking(db) as store:
        record = store.accounts.find_key(secrets_[0])
    assert record is not None
    assert (record["plan"], record["tier"], record["label"]) == ("sdk", "pro", "acme")
    assert record["id"] in out


def test_create_json(db: str, capsys) -> None:
    code, out, _ = run(capsys, "keys", "create", "--create", "--db", db, "--json")
    assert code == 0
    made = json.loads(out)
    assert set(made) == {"id", "prefix", "plan", "tier", "label", "created_at", "revoked_at",
                         "limits", "key"}
    assert (made["plan"], made["tier"], made["label"]) == ("free", "free", None)
    assert made["prefix"] == made["key"][:11]


def test_create_enterprise_with_limits(db: str, capsys) -> None:
    limits = '{"decision": {"minute": 5000, "month": null}, "optimization": {"max_dims": 20000}}'
    code, out, _ = run(capsys, "keys", "create", "--create", "--plan", "enterprise", "--tier",
                       "enterprise", "--limits", limits, "--db", db, "--json")
    assert code == 0
    assert json.loads(out)["limits"] == json.loads(limits)


@pytest.mark.parametrize(
    "argv",
    [["--plan", "gold"], ["--tier", "platinum"], ["--limits", "{"],
     ["--limits", '{"decision": {"weekly": 1}}']],
)
def test_create_rejects_bad_arguments(db: str, capsys, argv: list[str]) -> None:
    code, _, err = run(capsys, "keys", "create", "--create", "--db", db, *argv)
    assert code == 2 and "Invalid value" in err
    assert not os.path.exists(db)


def test_list_and_revoke_name_a_missing_database_and_create_none(db: str, capsys) -> None:
    for argv in (("keys", "list", "--db", db), ("keys", "revoke", "some-id", "--db", db)):
        code, out, err = run(capsys, *argv)
        assert code == 1 and out == ""
        assert f"no decido store at {os.path.abspath(db)}" in err
    assert not os.path.exists(db)


def test_create_names_its_store_and_makes_none_without_create(
        tmp_path: Path, capsys, monkeypatch) -> None:
    """Outside the directory where the server runs, ``keys create`` would write a key into a
    new ./decido.db the server never reads: it refuses, naming the store it looked for."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DECIDO_DB", raising=False)
    monkeypatch.delenv("DECIDO_STORE", raising=False)
    code, out, err = run(capsys, "keys", "create", "--tier", "pro")
    assert code == 1 and out == ""
    assert f"no decido store at {tmp_path / 'decido.db'}" in err
    assert "--store" in err and "--create" in err
    assert not (tmp_path / "decido.db").exists()
    code, out, _ = run(capsys, "keys", "create", "--tier", "pro", "--create")
    assert code == 0 and f"in the store {tmp_path / 'decido.db'}." in out
    code, out, _ = run(capsys, "keys", "create")  # the store is there now
    assert code == 0 and f"in the store {tmp_path / 'decido.db'}." in out


def test_list_shows_keys_but_never_secrets(db: str, capsys) -> None:
    run(capsys, "keys", "create", "--create", "--db", db)  # makes the database (and a first key)
    with open_blocking(db) as store:
        store.accounts.revoke_key(store.accounts.list_keys()[0]["id"])
    made = [json.loads(run(capsys, "keys", "create", "--create", "--label", f"c{i}", "--db", db,
                           "--json")[1]) for i in range(2)]
    code, out, _ = run(capsys, "keys", "list", "--db", db)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["id", "prefix", "plan", "tier", "label", "created", "revoked"]
    for m, line in zip(made, lines[2:], strict=True):
        assert line.split() == [m["id"], m["prefix"], "free", "free", m["label"],
                                m["created_at"], "-"]
        assert m["key"] not in out and m["key"][11:] not in out
    code, out, _ = run(capsys, "keys", "list", "--db", db, "--json")
    listed = json.loads(out)
    assert [r["id"] for r in listed][1:] == [m["id"] for m in made]
    assert all("key" not in r and "hash" not in r for r in listed)


def test_revoke(db: str, capsys) -> None:
    made = json.loads(run(capsys, "keys", "create", "--create", "--db", db, "--json")[1])
    code, out, _ = run(capsys, "keys", "revoke", made["id"], "--db", db)
    assert code == 0 and made["id"] in out
    with open_blocking(db) as store:
        assert store.accounts.find_key(made["key"])["revoked_at"] is not None
    listed = run(capsys, "keys", "list", "--db", db)[1].splitlines()[1].split()
    assert listed[-1] != "-"


def test_revoke_unknown_id_exits_1(db: str, capsys) -> None:
    run(capsys, "keys", "create", "--create", "--db", db)
    code, out, err = run(capsys, "keys", "revoke", "nope", "--db", db)
    assert code == 1 and out == ""
    assert "no key with id 'nope'" in err


def test_db_from_environment(tmp_path: Path, capsys, monkeypatch) -> None:
    path = tmp_path / "env.db"
    monkeypatch.setenv("DECIDO_DB", f"sqlite://{path}")
    assert run(capsys, "keys", "create", "--create", "--json")[0] == 0
    assert path.exists()


def test_bad_environment_exits_2(capsys, monkeypatch) -> None:
    monkeypatch.setenv("DECIDO_PORT", "x")
    assert run(capsys, "keys", "list")[0] == 2


def test_unusable_database_exits_1(tmp_path: Path, capsys) -> None:
    code, _, err = run(capsys, "keys", "list", "--db", str(tmp_path / "no" / "such" / "x.db"))
    assert code == 1 and err.startswith("decido: ")


def test_installed_console_script(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("decido")
    script = str(script) if script.exists() else shutil.which("decido")
    if script is None:
        pytest.skip("the decido console script is not installed (pip install .[service])")
    db = str(tmp_path / "script.db")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DECIDO_")}
    created = subprocess.run([script, "keys", "create",
                              "--create", "--plan", "rtl", "--tier", "team",
                              "--label", "script", "--db", db, "--json"],
                             capture_output=True, text=True, timeout=60, env=env, check=True)
    made = json.loads(created.stdout)
    listed = subprocess.run([script, "keys", "list", "--db", db], capture_output=True,
                            text=True, timeout=60, env=env, check=True)
    assert made["id"] in listed.stdout and made["key"] not in listed.stdout
    missing = subprocess.run([script, "keys", "revoke", "unknown", "--db", db],
                             capture_output=True, text=True, timeout=60, env=env)
    assert missing.returncode == 1 and "no key with id" in missing.stderr


def test_keys_commands_do_not_import_sanic(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from decido.cli import main\n"
        "assert main(['keys', 'create', '--create', "
        f"'--db', {str(tmp_path / 'light.db')!r}]) == 0\n"
        f"assert main(['keys', 'list', '--db', {str(tmp_path / 'light.db')!r}]) == 0\n"
        "assert 'sanic' not in sys.modules, 'sanic imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def test_package_exports_version_and_lazy_create_app() -> None:
    import decido_service

    assert decido_service.__version__ == "0.1.0"
    pytest.importorskip("sanic")
    from decido_service.http.app import create_app

    assert decido_service.create_app is create_app
    with pytest.raises(AttributeError):
        decido_service.no_such_thing  # noqa: B018


def test_serve_gives_each_worker_one_blas_thread_unless_told(monkeypatch, tmp_path) -> None:
    from decido_service import serve
    from decido_service.config import Settings

    for name in (*serve.BLAS_THREAD_VARIABLES, "DECIDO_HOST", "DECIDO_PORT", "DECIDO_DB",
                 "DECIDO_WORKERS"):
        monkeypatch.setenv(name, "")  # remembers the original value for the teardown
        monkeypatch.delenv(name)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # the operator's choice wins
    serve._environment(Settings.from_env(db=str(tmp_path / "d.db"), workers=2))
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    assert os.environ["MKL_NUM_THREADS"] == "1"
    assert os.environ["OMP_NUM_THREADS"] == "3"
    assert os.environ["DECIDO_WORKERS"] == "2"
