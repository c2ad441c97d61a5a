"""ochre-sdk for Python: write ochre tool plugins (WebAssembly components) in Python.

A tool is one function marked with :func:`tool`: its docstring is the description
the agent reads, ``schema`` is the JSON Schema of its arguments (checked by the
host before the function runs), and it returns text (``str``), JSON (``dict`` or
``list``: sent as text and as structured content) or an :class:`Output`. Raise
:class:`ToolError` for a structured failure. Host services are plain functions:
``log.info``, ``clock.now_ms``, ``kv.get``/``kv.set``, ``secrets.get``,
``progress.report``, ``browser.evaluate``/``browser.page_op``/..., ``cdp.send``,
``tools.call``. A plugin may call only the interfaces its ``plugin.toml`` lists.

``ochre plugin build`` makes the component with componentize-py (from PyPI): it
writes the WIT world of the listed interfaces, puts this module beside the app,
and adds the manifest the host reads. Outside a component (``python -m unittest``)
the module works too: the tools run, and a host call raises :class:`NotInComponent`
unless the test replaced it (``ochre_sdk.browser.evaluate = fake``).

This module speaks ``ochre:plugin@0.2.0``.
"""

import importlib
import json
import traceback

WIT_VERSION = "0.2.0"
_TOOLS = {}
_SCOPES = {"local": "LOCAL", "browser": "BROWSER", "network-adjacent": "NETWORK_ADJACENT"}


# ---- error codes: generated from ochre_protocol::codes by the test
# every_error_code_produced_is_registered (OCHRE_UPDATE_GOLDEN=1 rewrites it) ----
class Code:
    """The error codes ochre uses (docs/errors.md): ``ToolError(Code.ELEMENT_NOT_FOUND, ...)``."""

    # Arguments do not match the tool's schema (the field is named).
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    # The `intent` label is empty, blank or longer than 120 chars.
    INVALID_INTENT = "INVALID_INTENT"
    # No loaded plugin offers this tool.
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    # The tool's capability group is excluded by `--tools-only`/`--disable-tools`.
    CAPABILITY_DISABLED = "CAPABILITY_DISABLED"
    # The operator's policy forbids this (a file outside the allowed roots, a host interface).
    PERMISSION_DENIED = "PERMISSION_DENIED"
    # The client cancelled the call (`notifications/cancelled`).
    CANCELLED = "CANCELLED"
    # The call ran past its timeout.
    TIMEOUT = "TIMEOUT"
    # A replay or plan lacks parameters that have no default (all are named).
    MISSING_PARAMETERS = "MISSING_PARAMETERS"
    # The host failed (I/O and the like).
    INTERNAL = "INTERNAL"
    # The plugin trapped (a panic, an unreachable, a bad memory access).
    PLUGIN_TRAPPED = "PLUGIN_TRAPPED"
    # The plugin ran past its deadline.
    PLUGIN_TIMEOUT = "PLUGIN_TIMEOUT"
    # The plugin tried to grow its memory past its cap.
    PLUGIN_OUT_OF_MEMORY = "PLUGIN_OUT_OF_MEMORY"
    # The plugin returned something the host cannot use.
    PLUGIN_FAILED = "PLUGIN_FAILED"
    # Stored state exists but is damaged (the file is named and kept).
    STATE_CORRUPT = "STATE_CORRUPT"
    # The data dir could not be written or read.
    STORAGE_FAILED = "STORAGE_FAILED"
    # A `{{secret:NAME}}` parameter names no stored secret.
    SECRET_NOT_FOUND = "SECRET_NOT_FOUND"
    # No saved login of that name.
    LOGIN_NOT_FOUND = "LOGIN_NOT_FOUND"
    # A saved login or credential cannot be opened: no login key, or not the key it was saved with.
    LOGIN_LOCKED = "LOGIN_LOCKED"
    # No credential of that name (`ochre secret credential set`).
    CREDENTIAL_NOT_FOUND = "CREDENTIAL_NOT_FOUND"
    # A credential was asked for on a page (or frame) of an origin it is not bound to: nothing was typed.
    ORIGIN_REFUSED = "ORIGIN_REFUSED"
    # No hand-off or live view with that id (or it ended).
    HANDOFF_NOT_FOUND = "HANDOFF_NOT_FOUND"
    # No pages for people can be served here (a host embedded without ochre's MCP server): no live view, no secret page.
    LIVE_VIEW_UNAVAILABLE = "LIVE_VIEW_UNAVAILABLE"
    # No output handle with that id (or it expired).
    OUTPUT_HANDLE_NOT_FOUND = "output_handle_not_found"
    # No `ochre://` resource with that URI.
    RESOURCE_NOT_FOUND = "RESOURCE_NOT_FOUND"
    # The server serves its `--max-sessions` sessions: a new one is refused at `initialize` (HTTP 503 with `Retry-After`; in the JSON-RPC error's `data`).
    SESSION_LIMIT = "SESSION_LIMIT"
    # No browser could be launched or reached.
    BROWSER_UNAVAILABLE = "BROWSER_UNAVAILABLE"
    # A CDP command failed.
    BROWSER_ERROR = "BROWSER_ERROR"
    # No tab with that id.
    TAB_NOT_FOUND = "TAB_NOT_FOUND"
    # A person holds the tab (a hand-off or a live view in control): calls on it are refused until they are done.
    TAB_HELD = "TAB_HELD"
    # Navigation failed or timed out.
    NAVIGATION_FAILED = "NAVIGATION_FAILED"
    # A page answered with an HTTP error status (crawl results).
    HTTP_ERROR = "HTTP_ERROR"
    # The page's JavaScript threw.
    JS_ERROR = "JS_ERROR"
    # The document was replaced while the page operation ran (it is retried once).
    DOCUMENT_LOADING = "DOCUMENT_LOADING"
    # A ref of an older page or of a removed element.
    STALE_REF = "STALE_REF"
    # A ref that was never given out on that tab.
    REF_NOT_FOUND = "REF_NOT_FOUND"
    # No element matches the selector or description.
    ELEMENT_NOT_FOUND = "ELEMENT_NOT_FOUND"
    # The element takes no typed value (not an input, textarea, select or editable).
    ELEMENT_NOT_EDITABLE = "ELEMENT_NOT_EDITABLE"
    # The element cannot take the event now (covered, disabled, moving, hidden); waited for it.
    ELEMENT_NOT_INTERACTABLE = "ELEMENT_NOT_INTERACTABLE"
    # The element does not take keyboard focus.
    ELEMENT_NOT_FOCUSABLE = "ELEMENT_NOT_FOCUSABLE"
    # No form field with that label or name.
    FIELD_NOT_FOUND = "FIELD_NOT_FOUND"
    # A JavaScript dialog blocks the tab (answer it with `handle_dialog`; from the shell, `ochre dialog accept` or `dismiss`).
    DIALOG_OPEN = "DIALOG_OPEN"
    # `handle_dialog` on a tab without a dialog.
    NO_DIALOG = "NO_DIALOG"
    # A file that does not exist.
    FILE_NOT_FOUND = "FILE_NOT_FOUND"
    # The page's storage cannot be read or written (an opaque origin, storage disabled).
    STORAGE_UNAVAILABLE = "STORAGE_UNAVAILABLE"
    # The page's storage quota is exceeded.
    STORAGE_FULL = "STORAGE_FULL"
    # A recording is already running.
    RECORDING_ACTIVE = "RECORDING_ACTIVE"
    # No recording is running.
    NOT_RECORDING = "NOT_RECORDING"
    # No recording with that id.
    RECORDING_NOT_FOUND = "RECORDING_NOT_FOUND"
    # A recorded argument was not kept (a recording of an older version): record again.
    REDACTED_ARGUMENT = "REDACTED_ARGUMENT"
    # A replayed step's recorded target is not on the page (waited for it).
    TARGET_NOT_FOUND = "TARGET_NOT_FOUND"
    # The TOTP secret configured for a domain is unusable (not base32, too short).
    INVALID_SECRET = "INVALID_SECRET"
    # No crawl job with that id.
    JOB_NOT_FOUND = "JOB_NOT_FOUND"
    # No sitemap found for the site (robots.txt `Sitemap:` lines, `/sitemap.xml`).
    SITEMAP_NOT_FOUND = "SITEMAP_NOT_FOUND"
    # A crawl job's state could not be saved.
    STATE_WRITE_FAILED = "STATE_WRITE_FAILED"
    # No saved plan with that id.
    PLAN_NOT_FOUND = "PLAN_NOT_FOUND"
    # A workflow's or plan's state could not be read or saved.
    STATE_ERROR = "STATE_ERROR"
    # No workflow is running (start one with `workflow_init`).
    WORKFLOW_NOT_FOUND = "WORKFLOW_NOT_FOUND"
    # No worker of that name in the workflow.
    WORKER_NOT_FOUND = "WORKER_NOT_FOUND"
    # Workers of the workflow have not completed.
    WORKFLOW_INCOMPLETE = "WORKFLOW_INCOMPLETE"
    # No run with that id.
    RUN_NOT_FOUND = "RUN_NOT_FOUND"
    # The run cannot go from its state to the one asked for.
    INVALID_TRANSITION = "INVALID_TRANSITION"
    # A browser-first run cannot (or did not) use the browser (also its stop reason).
    INTENT_EXECUTION_FAILED = "intent_execution_failed"
    # The intent guard blocked a call of a browser-first run (also its stop reason).
    TOOL_POLICY_BLOCKED = "tool_policy_blocked"
    # No contract with that id (or the run has none).
    CONTRACT_NOT_FOUND = "CONTRACT_NOT_FOUND"
    # The contract's run is finished: the contract cannot change.
    CONTRACT_CLOSED = "CONTRACT_CLOSED"
    # Completion refused: the contract's criteria are not met.
    BULK_COMPLETION_GUARD_FAILED = "bulk_completion_guard_failed"
# ---- end of the error codes ----


class ToolError(Exception):
    """A structured tool failure: ``code`` is a stable string, one of
    :class:`Code` where one fits (``ToolError(Code.ELEMENT_NOT_FOUND, ...)``) or a
    plugin's own."""

    def __init__(self, code, message, details=None):
        super().__init__(f"{code}: {message}")
        self.code, self.message, self.details = code, message, details

    @classmethod
    def invalid_argument(cls, field, message):
        """An ``INVALID_ARGUMENT`` error naming the field."""
        return cls(Code.INVALID_ARGUMENT, message, {"field": field})


class NotInComponent(RuntimeError):
    """A host interface was called outside a component (in a native test)."""


class Output:
    """A tool result: text blocks, an optional structured (JSON) value and a
    one-line summary for the journal (it must hold no secret)."""

    def __init__(self, text=None, structured=None, summary=None):
        self.texts = [] if text is None else [text]
        self.structured = structured
        self.summary = summary

    @classmethod
    def json(cls, value, summary=None):
        """JSON as text and as structured content."""
        return cls(json.dumps(value), structured=value, summary=summary)


def tool(name, schema=None, *, read_only=False, destructive=False, idempotent=False,
         open_world=False, tier=1, scope="local", redact=(), secret=()):
    """Mark a function ``f(args: dict)`` as the tool ``name``; its docstring is the
    description. ``scope`` is ``local``, ``browser`` or ``network-adjacent`` (what
    the host's intent guard weighs); ``redact`` names arguments never journaled
    (text the tool types: recordings keep it as a parameter with its value as
    the default); ``secret`` names arguments that are secrets the tool sets behind
    the page (never journaled; recordings keep them as secret parameters)."""
    if scope not in _SCOPES:
        raise ValueError(f"scope {scope!r}: use one of {sorted(_SCOPES)}")

    def mark(fn):
        doc = " ".join((fn.__doc__ or "").split())
        if not doc:
            raise ValueError(f"tool {name}: give the function a docstring (the description)")
        _TOOLS[name] = {
            "fn": fn, "description": doc,
            "schema": schema or {"type": "object", "properties": {}, "additionalProperties": False},
            "annotations": (read_only, destructive, idempotent, open_world),
            "tier": tier, "scope": scope, "redact": list(redact) + [a for s in secret for a in (s, f"secret.{s}")],
        }
        return fn

    return mark


def tool_names():
    """The names of the tools defined so far (the build writes them into the manifest)."""
    return list(_TOOLS)


def _iface(name):
    try:
        return importlib.import_module(f"wit_world.imports.{name}")
    except ImportError:
        raise NotInComponent(
            f"the {name} interface is only there inside a component that lists it in plugin.toml"
        ) from None


def _host(call):
    """Run a host call; its error (a WIT tool-error) as a ToolError."""
    try:
        return call()
    except Exception as e:  # componentize_py_types.Err carries the WIT tool-error
        value = getattr(e, "value", None)
        if value is not None and hasattr(value, "code"):
            details = json.loads(value.details) if value.details else None
            raise ToolError(value.code, value.message, details) from None
        raise


class _Log:
    def _log(self, level, message):
        logging = _iface("logging")
        logging.log(getattr(logging.Level, level), str(message))

    def debug(self, message):
        self._log("DEBUG", message)

    def info(self, message):
        self._log("INFO", message)

    def warn(self, message):
        self._log("WARN", message)

    def error(self, message):
        self._log("ERROR", message)


class _Clock:
    def now_ms(self):
        """Milliseconds since the Unix epoch (fixed in the host's tests)."""
        return _iface("clock").now_ms()


class _Kv:
    """Plugin-private state that survives restarts."""

    def get(self, key):
        return _iface("kv").get(key)

    def set(self, key, value):
        _host(lambda: _iface("kv").set(key, value))

    def delete(self, key):
        _host(lambda: _iface("kv").delete(key))

    def keys(self):
        return _iface("kv").keys()


class _Secrets:
    def get(self, key):
        """A secret the operator configured (never log or return it)."""
        return _iface("secrets").get(key)


class _Progress:
    def report(self, progress, total=None, message=None):
        _iface("progress").report(float(progress), None if total is None else float(total), message)


def _tab(t):
    tab = {"tabId": t.id, "url": t.url, "title": t.title, "current": t.current}
    if t.opener is not None:
        tab["openerTabId"] = t.opener
    if t.dialog is not None:
        tab["dialog"] = {"type": t.dialog.kind.name.lower(), "message": t.dialog.message}
    return tab


class _Browser:
    """The host's browser: tabs as dicts (tabId, url, title, current, and
    openerTabId and dialog when there are), values as JSON."""

    def tabs(self):
        return [_tab(t) for t in _host(lambda: _iface("browser").tabs())]

    def new_tab(self, url=None, timeout_ms=30000):
        return _tab(_host(lambda: _iface("browser").new_tab(url, timeout_ms)))

    def close_tab(self, tab_id):
        _host(lambda: _iface("browser").close_tab(tab_id))

    def navigate(self, url, tab_id=None, timeout_ms=30000):
        return _tab(_host(lambda: _iface("browser").navigate(tab_id, url, timeout_ms)))

    def evaluate(self, expression, tab_id=None, timeout_ms=30000):
        """The JSON value of a JavaScript expression (promises awaited)."""
        return json.loads(_host(lambda: _iface("browser").evaluate(tab_id, expression, timeout_ms)))

    def page_op(self, op, args=None, tab_id=None, timeout_ms=30000):
        """One of the host's page operations (snapshot, find, ...), as JSON."""
        text = json.dumps(args or {})
        return json.loads(_host(lambda: _iface("browser").page_op(tab_id, op, text, timeout_ms)))

    def screenshot(self, tab_id=None, full_page=False, format="png", quality=None):
        """PNG or JPEG bytes of the viewport (or the full page)."""
        return _host(lambda: _iface("browser").screenshot(tab_id, full_page, format, quality, None))


class _Cdp:
    def send(self, method, params=None, tab_id=None):
        """A raw CDP command of a domain the manifest names; its JSON result."""
        text = json.dumps(params or {})
        return json.loads(_host(lambda: _iface("cdp").send(tab_id, method, text)))


class _Tools:
    def call(self, name, args=None):
        """Call another tool through the host's pipeline; its structured result or text."""
        out = _host(lambda: _iface("tools").call(name, json.dumps(args or {})))
        if out.structured:
            return json.loads(out.structured)
        return "\n".join(getattr(c, "value", "") for c in out.content if isinstance(getattr(c, "value", None), str))


log, clock, kv, secrets, progress = _Log(), _Clock(), _Kv(), _Secrets(), _Progress()
browser, cdp, tools = _Browser(), _Cdp(), _Tools()


def _definitions(group):
    types = _iface("types")
    out = []
    for name, t in _TOOLS.items():
        ro, de, idem, ow = t["annotations"]
        out.append(types.ToolDefinition(
            name=name, description=t["description"], input_schema=json.dumps(t["schema"]),
            capability=group, tier=t["tier"],
            annotations=types.Annotations(read_only=ro, destructive=de, idempotent=idem, open_world=ow),
            features=types.HostFeatures(0), scope=getattr(types.GuardScope, _SCOPES[t["scope"]]),
            redact=t["redact"],
        ))
    return out


def _output(value):
    """What a tool returned, as the WIT tool-output."""
    types = _iface("types")
    if isinstance(value, str):
        value = Output(value)
    elif not isinstance(value, Output):
        value = Output.json(value)
    content = [types.Content_Text(t) for t in value.texts]
    structured = None if value.structured is None else json.dumps(value.structured)
    return types.ToolOutput(content=content, structured=structured, summary=value.summary)


def _error(code, message, details=None):
    from componentize_py_types import Err
    types = _iface("types")
    return Err(types.ToolError(code=code, message=message,
                               details=None if details is None else json.dumps(details)))


def export(group):
    """The component's exports for the tools defined so far (the build's generated
    entry module calls it; plugin code does not)."""
    import wit_world

    class Plugin(wit_world.WitWorld):
        def describe(self):
            return _definitions(group)

        def call(self, name, args):
            t = _TOOLS.get(name)
            if t is None:
                raise _error(Code.UNKNOWN_TOOL, f"this plugin has no tool {name!r}")
            try:
                return _output(t["fn"](json.loads(args)))
            except ToolError as e:
                raise _error(e.code, e.message, e.details) from None
            except Exception as e:
                if type(e).__name__ == "Err":
                    raise
                last = traceback.format_exception_only(type(e), e)[-1].strip()
                raise _error(Code.PLUGIN_FAILED, f"{name} raised {last}") from None

    return Plugin
