"""Graph nodes, one module per stage. Each node reads state and returns a partial update."""
