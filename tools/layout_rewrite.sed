# GNU sed: the flat grader module names and paths -> the layered ones (grader/README.md). A line that imports
# several modules at once (from grader import a, b) needs tools/layout_rewrite.py, which also splits it.
s#\bgrader\.guard\b\([^.]\|$\)#grader.guard.audit_hooks\1#g
s#\bgrader/guard\.py#grader/guard/audit_hooks.py#g
s#^\(\s*\)from grader import guard$#\1from grader.guard import audit_hooks as guard#
s#\bgrader\.\(course\|book_links\)\b#grader.catalog.\1#g
s#\bgrader\.\(policy\|integrity\|learner_values\|audit\|sandbox\|containment\|namespaces\)\b#grader.guard.\1#g
s#\bgrader\.\(legs\|limits\|machine\|settings\|deferred_stop\|lazy_dynamo\|instruments\|submission\|expect\|plugin\|batch\|workers\|daemon\|runner\)\b#grader.engine.\1#g
s#\bgrader\.\(workspace\|progress\|milestones\|targets\|report\|watch\)\b#grader.learner.\1#g
s#\bgrader\.notebooks\b#grader.authoring.notebooks#g
s#\bgrader/\(course\|book_links\)\.py#grader/catalog/\1.py#g
s#\bgrader/\(policy\|integrity\|learner_values\|audit\|sandbox\|containment\|namespaces\)\.py#grader/guard/\1.py#g
s#\bgrader/\(legs\|limits\|machine\|settings\|deferred_stop\|lazy_dynamo\|instruments\|submission\|expect\|plugin\|batch\|workers\|daemon\|runner\)\.py#grader/engine/\1.py#g
s#\bgrader/\(workspace\|progress\|milestones\|targets\|report\|watch\)\.py#grader/learner/\1.py#g
s#\bgrader/notebooks\.py#grader/authoring/notebooks.py#g
s#^\(\s*\)from grader import \(course\|book_links\)$#\1from grader.catalog import \2#
s#^\(\s*\)from grader import \(policy\|integrity\|learner_values\|audit\|sandbox\|containment\|namespaces\)$#\1from grader.guard import \2#
s#^\(\s*\)from grader import \(legs\|limits\|machine\|settings\|deferred_stop\|lazy_dynamo\|instruments\|submission\|expect\|plugin\|batch\|workers\|daemon\|runner\)$#\1from grader.engine import \2#
s#^\(\s*\)from grader import \(workspace\|progress\|milestones\|targets\|report\|watch\)$#\1from grader.learner import \2#
s#^\(\s*\)from grader import notebooks$#\1from grader.authoring import notebooks#
s#\bgrader\.engine\.plugin\.skip_leg\b#grader.engine.expect.skip_leg#g
