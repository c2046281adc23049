"""The served assistant (``mtrag-graph serve``): an HTTP API over the graph and a web page.

``app.create_app`` builds the ASGI app; ``server`` runs it under uvicorn (the app of the command's
options; uvicorn's app factory for ``--workers N``); ``threads`` keeps who owns which conversation and
the turn locks; ``storage`` keeps a thread to its latest checkpoint; ``http`` is uvicorn's HTTP/1.1
with a deadline for request heads; ``static/`` is the page (plain HTML, CSS and JavaScript, with
marked, DOMPurify and Swagger UI shipped beside it: ``VENDORED.md``).
"""
