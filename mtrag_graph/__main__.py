import sys

from mtrag_graph.cli import main

if __name__ == "__main__":  # worker processes that import this module (multiprocessing) must not run it
    sys.exit(main())
