"""The grading engine: how a submission is loaded (submission), run on each device leg (legs, plugin, expect,
instruments) within its limits (limits, settings, deferred_stop, lazy_dynamo), by warm processes (workers, batch,
reached through daemon) and collected into a Grade (runner). Imports only grader.guard.audit_hooks, grader.catalog and
grader.simulated below it."""
