"""The served assistant (``mtrag-graph serve``): an HTTP API over the chat graph and a web page.

``app.create_app`` builds the ASGI app; ``threads`` keeps who owns which conversation; ``sources``
finds a cited passage's text and origin; ``static/`` is the page (plain HTML, CSS and JavaScript).
"""
