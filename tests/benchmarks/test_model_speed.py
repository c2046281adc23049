import pytest

from benchmarks import model_speed


def test_an_unknown_model_is_an_error_that_names_it(capsys):
    assert model_speed.main(["--models", "no-such-model"]) == 2
    assert "no-such-model" in capsys.readouterr().err


def test_lengths_under_one_are_refused(capsys):
    assert model_speed.main(["--prompt-tokens", "0"]) == 2
    assert "--prompt-tokens" in capsys.readouterr().err


@pytest.mark.slow
def test_the_small_bundled_model_is_timed_reading_and_writing(capsys):
    rc = model_speed.main(
        ["--models", "qwen2.5-coder-0.5b", "--prompt-tokens", "32", "--new-tokens", "4", "--repeats", "1"]
    )
    assert rc == 0
    row = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| qwen2.5-coder-0.5b")]
    assert len(row) == 1
    cells = [c.strip() for c in row[0].strip("|").split("|")]
    assert float(cells[1]) > 0 and float(cells[2]) > 0 and 1 <= int(cells[3]) <= 4 and float(cells[4]) > 0
