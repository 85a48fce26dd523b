"""Drop repeated inline scripts from each page.

sphinx-thebe adds an inline `const THEBE_JS_URL = ...` script once, but the HTML builder's script list
ends up holding it twice (once with filename None, once with ''), so the browser throws "Identifier
'THEBE_JS_URL' has already been declared" on every page."""


def _dedupe(app, pagename, templatename, context, doctree):
    seen, unique = set(), []
    for script in context.get("script_files", []):
        key = (getattr(script, "filename", None) or "", tuple(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app):
    app.connect("html-page-context", _dedupe, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
