"""Full-RAG retrieval: passage corpora, hybrid (BM25 + dense) indexes, search, reranking and metrics."""
