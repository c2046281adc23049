VENV ?= .venv
PY := $(VENV)/bin/python
EXAMPLES ?= examples/conversations.jsonl

.PHONY: setup demo test test-fast lint format bench clean vllm-setup vllm-start vllm-stop test-vllm

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

vllm-stop:
	bash scripts/vllm_stop.sh

## The tests against a real vLLM server (they start their own on a free port)
test-vllm: vllm-setup
	MTRAG_REQUIRE_VLLM=1 $(PY) -m pytest -q tests/models/test_vllm_engine.py

lint: setup
	$(VENV)/bin/ruff check mtrag_graph research benchmarks tests
	$(VENV)/bin/ruff format --check mtrag_graph research benchmarks tests
	$(VENV)/bin/mypy mtrag_graph research

format: setup
	$(VENV)/bin/ruff format mtrag_graph research benchmarks tests
	$(VENV)/bin/ruff check --fix mtrag_graph research benchmarks tests

clean:
	rm -rf $(VENV) demo-predictions.jsonl .pytest_cache
