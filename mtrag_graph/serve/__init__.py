"""The served assistant (``mtrag-graph serve``): an HTTP API over the graph and a web page.

``app.create_app`` builds the ASGI app; ``threads`` keeps who owns which conversation and the turn
locks; ``storage`` keeps a thread to its latest checkpoint; ``sources`` finds a cited passage's text and
origin; ``http`` is uvicorn's HTTP/1.1 with a deadline for request heads; ``static/`` is the page (plain
HTML, CSS and JavaScript, with marked, DOMPurify and Swagger UI shipped beside it: ``VENDORED.md``).
"""
