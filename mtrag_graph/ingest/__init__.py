"""Documents into passages: text extraction (``extract``), chunking (``chunk``), incremental indexing (``build``)."""
