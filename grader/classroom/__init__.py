"""The course in a classroom: nbgrader assignments generated from course.toml, graded by the course's graders.

    blocks       how an exercise's points are split into blocks of checks (right on the CPU, on an
                 accelerator, no needless copies), and the verdict of a Grade on each block
    source       the exercise's code, its docstring, and the answer cell's source (solution / broken code)
    notebook     one nbgrader source notebook for a list of exercises
    generate     a complete nbgrader course folder (nbgrader_config.py, source/<assignment>/*.ipynb)
    release      nbgrader preprocessor: the released answer cell shows the broken code, not a stub
    kernel       what runs inside the notebook's kernel while the learner works: the %%answer magic, the
                 self-check, the test cells (feedback; autograding never runs them)
    report       a Grade as `devcourse check` shows it (a table, then the messages)
    isolation    whether the grading workers are isolated (grader.guard.sandbox); autograde refuses without
    answers      a class's answers graded by the engine, each distinct one once, several at once
    engine_grading  nbgrader preprocessor: grade the answer cells with the engine instead of running the notebook
    autograde    `devcourse classroom autograde`: nbgrader's Autograde converter with that step, per submission
    cli          the `devcourse classroom ...` subcommands
"""
