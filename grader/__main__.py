"""`python -m grader ...` is the `devcourse` command."""

import sys

from grader.launch import main

sys.exit(main())
