VENV ?= .venv
PY := $(VENV)/bin/python
EXAMPLES ?= examples/conversations.jsonl

.PHONY: setup demo test test-fast lint format bench clean vllm-setup vllm-start vllm-start-default vllm-stop test-vllm

$(VENV)/.mtrag-setup-done: pyproject.toml scripts/setup.sh
	bash scripts/setup.sh

setup: $(VENV)/.mtrag-setup-done

## Answer the example conversations with the offline default models
demo: setup
	rm -f demo-predictions.jsonl
	$(VENV)/bin/mtrag-graph answer $(EXAMPLES) -o demo-predictions.jsonl --show

## The whole test suite (unit tests with fakes + real-model tests)
test: setup
	$(PY) -m pytest -q

## Unit tests only (no real models)
test-fast: setup
	$(PY) -m pytest -q -m "not slow"

## vLLM on this CPU in .venv-vllm, the bundled 0.5B converted for it (docs/serving.md, "vLLM on a CPU")
vllm-setup: setup
	bash scripts/vllm_setup.sh

vllm-start: vllm-setup
	bash scripts/vllm_start.sh

## The whole default pipeline's two models on vLLM (0.5B on 8011, 1.5B on 8012): then --preset vllm
vllm-start-default: vllm-setup
	bash scripts/vllm_start_default.sh

vllm-stop:
	bash scripts/vllm_stop.sh all

## The tests against real vLLM servers (the 0.5B's on a free port; the default's two on 8011 and 8012)
test-vllm: vllm-setup
	MTRAG_REQUIRE_VLLM=1 $(PY) -m pytest -q tests/models/test_vllm_engine.py tests/models/test_vllm_default.py

lint: setup
	$(VENV)/bin/ruff check mtrag_graph research benchmarks tests
	$(VENV)/bin/ruff format --check mtrag_graph research benchmarks tests
	$(VENV)/bin/mypy mtrag_graph research

format: setup
	$(VENV)/bin/ruff format mtrag_graph research benchmarks tests
	$(VENV)/bin/ruff check --fix mtrag_graph research benchmarks tests

clean:
	rm -rf $(VENV) demo-predictions.jsonl .pytest_cache
