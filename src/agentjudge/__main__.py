"""`python -m agentjudge`."""

import sys

from agentjudge.cli import main

sys.exit(main())
