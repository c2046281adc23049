"""Running the graph: batches of tasks (``batch``), the task pool (``concurrency``), resumable output
(``jsonl_out``), the route and its costs (``bookkeeping``), traces (``tracing``), streaming and the chat."""
