"""SnapStart's runtime hooks: what a snapshot freezes is made fresh after each restore."""

import random

import pytest
import snapshot_restore_py

from controlplane import config


@pytest.fixture
def region(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("TABLE_NAME", "t")
    monkeypatch.setenv("CURSOR_SECRET", "s")
    config.reset()
    yield
    config.reset()


def _hooks(registry) -> list:
    return [func for func, args, kwargs in registry]


def test_config_registers_one_hook_for_each_side_of_the_snapshot():
    assert _hooks(snapshot_restore_py.get_before_snapshot()).count(config._before_snapshot) == 1
    assert _hooks(snapshot_restore_py.get_after_restore()).count(config._after_restore) == 1


def test_the_dynamodb_client_is_made_before_the_snapshot(region):
    config._before_snapshot()

    assert config.dynamodb.cache_info().currsize == 1


def test_after_a_restore_every_client_is_new_and_the_settings_are_kept(region):
    # Given clients and settings made before the snapshot
    before = (config.dynamodb(), config.sqs())
    settings = config.settings()

    # When the environment is restored
    config._after_restore()

    # Then each client is made again (new connections, current credentials), the settings are not re-read
    assert config.dynamodb() is not before[0]
    assert config.sqs() is not before[1]
    assert config.settings() is settings


def test_after_a_restore_random_draws_differ_from_the_snapshots(region):
    # Given the generator's state as a snapshot froze it, and what it would draw next
    random.seed(1234)
    frozen = random.getstate()
    would_draw = [random.random() for _ in range(4)]

    # When an environment is restored from that state
    random.setstate(frozen)
    config._after_restore()

    # Then it draws its own numbers (the backoff jitter of one environment is not every environment's)
    assert [random.random() for _ in range(4)] != would_draw
