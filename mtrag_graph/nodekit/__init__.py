"""What the nodes are built with that is not a node: the one node wrapper (``wrapper.guarded``), the
custom stream events a run sends (``events``), and the release of draft text that stands (``release``)."""
