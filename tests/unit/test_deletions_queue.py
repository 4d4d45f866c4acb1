"""Where a job queues itself: the deletions queue the settings name, and none is refused loudly."""

import pytest

from controlplane import config


@pytest.fixture
def fresh_settings():
    config.reset()
    yield
    config.reset()


def test_a_job_that_would_queue_itself_where_no_queue_is_set_fails_instead_of_sending_nowhere(
    fresh_settings, monkeypatch
):
    # Every job runs in line to its end where there is no queue, so this is a bug to see, not a job to lose
    monkeypatch.delenv("DELETIONS_QUEUE_URL", raising=False)

    with pytest.raises(RuntimeError, match="DELETIONS_QUEUE_URL is not set"):
        config.deletions_queue()


def test_a_job_queues_itself_on_the_queue_the_settings_name(fresh_settings, monkeypatch):
    monkeypatch.setenv("DELETIONS_QUEUE_URL", "https://sqs.us-east-1.amazonaws.com/000000000000/deletions")

    assert config.deletions_queue() == "https://sqs.us-east-1.amazonaws.com/000000000000/deletions"
