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


class ToolError(Exception):
    """A structured tool failure: ``code`` is a stable SCREAMING_SNAKE string."""

    def __init__(self, code, message, details=None):
        super().__init__(f"{code}: {message}")
        self.code, self.message, self.details = code, message, details

    @classmethod
    def invalid_argument(cls, field, message):
        """An ``INVALID_ARGUMENT`` error naming the field."""
        return cls("INVALID_ARGUMENT", message, {"field": field})


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
                raise _error("UNKNOWN_TOOL", f"this plugin has no tool {name!r}")
            try:
                return _output(t["fn"](json.loads(args)))
            except ToolError as e:
                raise _error(e.code, e.message, e.details) from None
            except Exception as e:
                if type(e).__name__ == "Err":
                    raise
                last = traceback.format_exception_only(type(e), e)[-1].strip()
                raise _error("PLUGIN_FAILED", f"{name} raised {last}") from None

    return Plugin
