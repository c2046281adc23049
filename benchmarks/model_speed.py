"""How fast the bundled llama.cpp models read and write on this machine: one table, no graph.

    python -m benchmarks.model_speed [--models qwen2.5-coder-1.5b qwen2.5-coder-0.5b] [--prompt-tokens 500]

The pipeline's seconds per question are mostly these two rates: the first draft reads about 500 prompt
tokens and writes about 50 (benchmarks/results/documents.md). The same code and prompts took 4.0 s to the
first shown text on one 2-core machine and 9.1 s on another; this says which kind of machine a run was
on before its seconds are compared with a bar. Per model: the prompt read from an empty cache (the best
of ``--repeats``), then ``--new-tokens`` written greedily after it; the model loaded as the pipeline loads it (its
context window, ``MTRAG_N_CTX``; its threads, ``MTRAG_N_THREADS``, else every core).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from mtrag_graph import settings
from mtrag_graph.models.bundled import BundledModelError, gguf_path
from mtrag_graph.models.llama import load_llama, prefix_states

MODELS = ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b")
# ordinary prose, so the token count is what a passage of that length costs
TEXT = (
    "The backup tool keeps each archive in a repository. Before you start creating backups, make sure "
    "that there is always a good amount of free space on the filesystem that holds the repository. "
)


def measure(model: str, prompt_tokens: int, new_tokens: int, repeats: int, threads: int) -> dict[str, Any]:
    # the Llama the pipeline loads for this model: its context window and threads (models.llama.load_llama)
    n_ctx = settings.n_ctx()
    if prompt_tokens + new_tokens > n_ctx:
        raise ValueError(f"a prompt of {prompt_tokens} and {new_tokens} written exceed the context ({n_ctx})")
    path = str(gguf_path(model))
    llm, lock = load_llama(path, n_ctx, threads)
    with lock:  # the process-wide instance: one caller at a time
        tokens: list[int] = []
        while len(tokens) < prompt_tokens:
            tokens += llm.tokenize(TEXT.encode("utf-8"), add_bos=False)
        tokens = tokens[:prompt_tokens]
        read = []
        for _ in range(max(1, repeats)):
            llm.reset()
            start = time.perf_counter()
            llm.eval(tokens)
            read.append(time.perf_counter() - start)
        start = time.perf_counter()
        written = 0
        # generate finds the prompt already read (a prefix match) and reads only its last token again
        for token in llm.generate(tokens, temp=0.0):
            written += 1
            if written >= new_tokens or token == llm.token_eos():
                break
        write_seconds = time.perf_counter() - start
        # the context no longer holds what the pipeline's saved states say it does
        prefix_states(path, n_ctx).forget()
    return {
        "model": model,
        "read_seconds": min(read),
        "read_rate": prompt_tokens / min(read),
        "written": written,
        "write_rate": written / write_seconds if write_seconds > 0 else 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--prompt-tokens", type=int, default=500)
    parser.add_argument("--new-tokens", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    if args.prompt_tokens < 1 or args.new_tokens < 1:
        print("error: --prompt-tokens and --new-tokens must be at least 1", file=sys.stderr)
        return 2
    threads = settings.n_threads()
    rows = []
    for model in args.models:
        try:
            rows.append(measure(model, args.prompt_tokens, args.new_tokens, args.repeats, threads))
        except (BundledModelError, ValueError) as error:
            print(f"error: {model}: {error}", file=sys.stderr)
            return 2
    print(f"{threads} threads; a prompt of {args.prompt_tokens} tokens, then {args.new_tokens} written")
    print("| model | prompt read s | prompt tokens/s | tokens written | written tokens/s |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['model']} | {row['read_seconds']:.2f} | {row['read_rate']:.0f} | {row['written']} | "
            f"{row['write_rate']:.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
