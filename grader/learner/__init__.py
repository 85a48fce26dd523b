"""The learner's side of a grade: where their files are (workspace), their progress (progress, milestones), what a
command names (targets), how a grade looks (report) and watch mode (watch). Imports only grader.engine and the
layers below it; the front ends (grader.cli, grader.magics) and the tools (classroom, doctor, authoring) use it."""
