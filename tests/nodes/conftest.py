"""The retrieve node's tests search the small index that the retrieval tests build."""

from tests.retrieval.conftest import corpus_file, fake_embedder, tiny_index  # noqa: F401 - fixtures, used by name
