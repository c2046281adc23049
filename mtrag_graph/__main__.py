import sys

from mtrag_graph.cli import main

sys.exit(main())
