from benchmarks.throughput import _per_engine, group_cpu_seconds, preset_engines


def test_the_vllm_preset_names_both_servers_the_rewrite_models_first():
    assert preset_engines("vllm") == ["http://127.0.0.1:8011/v1", "http://127.0.0.1:8012/v1"]


def test_the_default_preset_runs_in_process():
    assert preset_engines("ncl") == []


def test_an_engine_column_shows_each_engine_or_a_dash():
    assert _per_engine([0.5, 0.25], ".0%") == "50% / 25%"
    assert _per_engine(3.0, ".0f") == "3"
    assert _per_engine(None, ".0f") == "-"
    assert _per_engine([None, 1.5], ".2f") == "- / 1.50"


def test_an_engine_without_its_pidfile_has_no_cpu_figure():
    assert group_cpu_seconds("http://127.0.0.1:1/v1") is None
