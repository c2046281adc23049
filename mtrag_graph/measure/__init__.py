"""The measurement side: the benchmark's metrics and judges (``evaluation``), each decision alone on
labelled sets (``decisions``), presets timed side by side (``bench``). Its heavy libraries are the
``measure`` extra; the serving graph imports nothing from here."""
