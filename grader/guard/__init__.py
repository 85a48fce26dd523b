"""What keeps a submission from reaching beyond its grading or grading itself: the source policy (policy), the
checks around each call (integrity, learner_values, audit), the run-time audit hooks (audit_hooks) and the
operating system's confinement (sandbox, containment, namespaces). grader/INTEGRITY.md says what each stops.
Imports only grader.catalog and grader.simulated below it."""
