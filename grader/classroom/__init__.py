"""The course in a classroom: nbgrader assignments generated from course.toml, graded by the course's graders.

    blocks       how an exercise's points are split into blocks of checks (right on the CPU, on an
                 accelerator, no needless copies), and the verdict of a Grade on each block
    source       the exercise's code, its docstring, and the answer cell's source (solution / broken code)
    notebook     one nbgrader source notebook for a list of exercises
    generate     a complete nbgrader course folder (nbgrader_config.py, source/<assignment>/*.ipynb)
    release      nbgrader preprocessor: the released answer cell shows the broken code, not a stub
    kernel       what runs inside the notebook's kernel: the %%answer magic, the self-check, the tests
    report       a Grade as `devcourse check` shows it (a table, then the messages)
    parallel     `devcourse classroom autograde`: nbgrader's autograde, one submission per Dask task
    cli          the `devcourse classroom ...` subcommands
"""
