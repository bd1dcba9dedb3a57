"""The bundled TOML files' parses kept as JSON in the user's cache (config/loader.py,
parse_toml): a later process reads the copy instead of parsing again, and gets exactly what
tomllib gives; other files, damaged copies and what JSON cannot hold are parsed as before."""
import json
import tomllib

import pytest

from mcusim.config import loader
from mcusim.config.loader import PARSED, data_dir, load_board, parse_toml
from mcusim.power.model import load_power_model


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "mcusim" / PARSED


def _no_parsing(monkeypatch):
    def refuse(text):
        raise AssertionError("parsed again")
    monkeypatch.setattr(loader.tomllib, "loads", refuse)


def test_every_bundled_file_is_read_back_from_its_copy_as_tomllib_parses_it(cache, monkeypatch):
    files = sorted(path for kind in ("boards", "cores", "powermodels") for path in data_dir(kind).rglob("*.toml"))
    assert len(files) >= 10
    expected = {path: tomllib.loads(path.read_text()) for path in files}
    assert all(parse_toml(path.read_text(), path) == expected[path] for path in files)
    assert len(list(cache.glob("*.json"))) == len(files)
    _no_parsing(monkeypatch)
    for path in files:
        assert parse_toml(path.read_text(), path) == expected[path]


def test_a_board_and_its_power_model_load_the_same_from_the_copies(cache, monkeypatch):
    board, model = load_board("mcu-d"), load_power_model("mcu-d")
    _no_parsing(monkeypatch)
    assert load_board("mcu-d") == board
    assert load_power_model("mcu-d") == model


def test_a_file_of_the_users_is_parsed_every_time_and_not_kept(cache, tmp_path):
    own = tmp_path / "my-board.toml"
    own.write_text('[board]\nname = "mine"\n')
    assert parse_toml(own.read_text(), own) == {"board": {"name": "mine"}}
    assert not cache.exists()


def test_a_damaged_copy_is_parsed_again_and_replaced(cache):
    path = data_dir("cores") / "cortex-m4.toml"
    expected = tomllib.loads(path.read_text())
    parse_toml(path.read_text(), path)
    (copy,) = cache.glob("*.json")
    for damage in (b"{not json", b"[1, 2]", b""):
        copy.write_bytes(damage)
        assert parse_toml(path.read_text(), path) == expected
    assert json.loads(copy.read_text()) == expected  # (kept again)


def test_what_json_cannot_hold_is_parsed_every_time(cache, monkeypatch):
    monkeypatch.setattr(loader, "_bundled", lambda path: True)
    text = "[board]\nbuilt = 2026-12-06\n"
    assert parse_toml(text, data_dir("boards") / "dated.toml") == tomllib.loads(text)
    assert not list(cache.glob("*.json"))


def test_without_a_user_cache_folder_nothing_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/folder")  # (never relative to the working directory)
    monkeypatch.setenv("HOME", "relative")
    monkeypatch.chdir(tmp_path)
    path = data_dir("cores") / "cortex-m7.toml"
    assert parse_toml(path.read_text(), path) == tomllib.loads(path.read_text())
    assert not any(tmp_path.iterdir())
