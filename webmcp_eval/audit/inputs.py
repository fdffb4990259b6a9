"""Inputs for smoke calls, from a tool's input schema.

Given what the page offers (``PageValues``: its forms' options, bounds and
defaults, the ids it links to), the valid inputs come first from those and
the schema's own values (``realistic_inputs``), each labelled with where its
values came from. Other valid inputs are drawn by hypothesis-jsonschema (deterministically, no
example database): the required parameters only, every parameter, each
boundary of a bounded parameter and each enum value. Invalid inputs are one
change each away from a valid one (a required parameter left out, a value of
the wrong type, a value out of range, an extra key where the schema forbids
them), and every one is checked with jsonschema: an input that the schema
would in fact accept is never sent as "invalid".
"""

from __future__ import annotations

import copy
import re
import warnings
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import Any

import jsonschema

from webmcp_eval.suite.tool_schema import properties_of


@dataclass
class SmokeInput:
    label: str  # "required only", "all fields", "limit = 10 (maximum)", "missing required q", ...
    args: dict[str, Any]
    valid: bool
    # a retry: sent only when the valid input before it was refused, and then judged in its place
    fallback: bool = False


def _draw(schema: dict[str, Any]) -> dict[str, Any] | None:
    """One value of schema, the same on every run; None when the library finds none."""
    # Imported here: hypothesis takes seconds to import and to build its character tables, which a page whose
    # tools take no parameters never needs (smoke_inputs does not draw for those).
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis.errors import HypothesisException
    from hypothesis_jsonschema import from_schema

    drawn: list[Any] = []

    @settings(
        max_examples=1,
        derandomize=True,
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(from_schema(schema))
    def collect(value: object) -> None:
        drawn.append(value)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            collect()
    except (HypothesisException, jsonschema.exceptions.SchemaError, TypeError, ValueError):
        return None
    return drawn[0] if drawn and isinstance(drawn[0], dict) else None


def _valid(schema: dict[str, Any], value: object) -> bool:
    try:
        return jsonschema.Draft202012Validator(schema).is_valid(value)
    except (jsonschema.exceptions.SchemaError, TypeError, ValueError):
        return False


_WRONG = {
    "string": 12345,
    "integer": "not a number",
    "number": "not a number",
    "boolean": "yes",
    "object": "x",
    "array": "x",
}


def smoke_inputs(schema: object, page: PageValues | None = None, tool: str = "") -> list[SmokeInput]:
    """Valid inputs first, then invalid ones; empty when the schema is not an object schema we can draw from.

    Given what the page offers (``page``), the first valid input is the most realistic one, and the next
    realistic ones, then the schema's own draw, are its fallbacks: each sent only when the one before was
    refused (a site's own checks refuse a random draw that its schema allows)."""
    out = _schema_inputs(schema)
    realistic = realistic_inputs(schema, page, tool) if page is not None else []
    if not realistic:
        return out
    drawn = [i for i in out if i.valid and i.label == "required only" and i.args != realistic[0].args]
    chain = [realistic[0], *(replace(i, fallback=True) for i in realistic[1:] + drawn)]
    return chain + [i for i in out if i not in drawn and not (i.valid and i.args == realistic[0].args)]


def _object_schema(schema: object) -> tuple[dict[str, Any], dict[str, Any], list[str]] | None:
    """(the schema, its properties, the required ones it has) of a tool's input; no schema is an empty object's
    (a tool registered without one takes no arguments); None for a schema that is not an object."""
    if schema is None:
        schema = {"type": "object", "properties": {}}
    if not isinstance(schema, dict):
        return None
    props = properties_of(schema)
    return schema, props, [r for r in schema.get("required") or [] if r in props]


def _schema_inputs(schema: object) -> list[SmokeInput]:
    parts = _object_schema(schema)
    if parts is None:
        return []
    schema, props, required = parts
    only_required = {
        **schema,
        "properties": {k: props[k] for k in required},
        "required": required,
        "additionalProperties": False,
    }
    everything = {**schema, "required": list(props)}
    out: list[SmokeInput] = []
    # With nothing required, {} is the one value only_required allows; with no properties, {} is all the fields.
    base = {} if not required and _valid(only_required, {}) else _draw(only_required)
    full = {} if not props and _valid(everything, {}) else _draw(everything)
    if base is not None:
        out.append(SmokeInput("required only", base, True))
    if full is not None and full != base:
        out.append(SmokeInput("all fields", full, True))
    start = base if base is not None else full
    if start is None:
        return out
    for name, sub in props.items():
        if not isinstance(sub, dict):
            continue
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if isinstance(sub.get(key), int | float) and not isinstance(sub.get(key), bool):
                bound = sub[key] + (1 if key == "exclusiveMinimum" else -1 if key == "exclusiveMaximum" else 0)
                out.append(SmokeInput(f"{name} = {bound} ({key})", {**start, name: bound}, True))
        for key in ("minLength", "maxLength"):
            if isinstance(sub.get(key), int) and sub[key] <= 4096:
                out.append(
                    SmokeInput(f"{name} of {sub[key]} characters ({key})", {**start, name: "a" * sub[key]}, True)
                )
        for value in sub.get("enum") or []:
            out.append(SmokeInput(f"{name} = {value!r} (enum)", {**start, name: value}, True))
    out = [i for i in out if not i.valid or _valid(schema, i.args)]
    out += [i for i in _invalid(schema, props, required, full or start) if not _valid(schema, i.args)]
    return out


def _invalid(
    schema: dict[str, Any], props: dict[str, Any], required: list[str], full: dict[str, Any]
) -> list[SmokeInput]:
    out: list[SmokeInput] = []
    for name in required:
        args = copy.deepcopy(full)
        args.pop(name, None)
        out.append(SmokeInput(f"missing required {name}", args, False))
    for name, sub in props.items():
        if not isinstance(sub, dict):
            continue
        kind = sub.get("type")
        if isinstance(kind, str) and kind in _WRONG:
            out.append(SmokeInput(f"{name} of the wrong type", {**full, name: _WRONG[kind]}, False))
        if isinstance(sub.get("maximum"), int | float):
            out.append(SmokeInput(f"{name} above its maximum", {**full, name: sub["maximum"] + 1}, False))
        if isinstance(sub.get("minimum"), int | float):
            out.append(SmokeInput(f"{name} below its minimum", {**full, name: sub["minimum"] - 1}, False))
        if isinstance(sub.get("maxLength"), int) and sub["maxLength"] <= 4096:
            out.append(
                SmokeInput(f"{name} longer than its maxLength", {**full, name: "a" * (sub["maxLength"] + 1)}, False)
            )
        if sub.get("enum"):
            out.append(SmokeInput(f"{name} outside its enum", {**full, name: "__not_a_choice__"}, False))
    if schema.get("additionalProperties") is False:
        out.append(SmokeInput("an extra key", {**full, "unexpected_key": 1}, False))
    return out


# ---- realistic inputs: the page's own values before the schema's draw ------------------------------------------
#
# One generator for init's probe and the audit's smoke calls. A value a site accepts is more often one it offers
# itself than one a schema allows: the form's own options, bounds and defaults, the schema's enum, examples and
# default, a date that is not in the past, an id the page links to. Each parameter gets an ordered list of
# candidates, each with where it came from; a tool is called with the first candidate of every parameter, and
# a refusal is retried with the next ones (``realistic_inputs``) before anything is judged.

# What a page shows that an input can be drawn from, read in the page (PAGE_VALUES_JS) for the forms of every
# tool and the ids its links and lists carry.
PAGE_VALUES_JS = """() => {
  const fields = {};
  for (const form of document.querySelectorAll('form[toolname]')) {
    const out = {};
    for (const e of form.elements) {
      const name = e.getAttribute('name');
      if (!name || ['submit', 'button', 'reset', 'image', 'hidden'].includes((e.type || '').toLowerCase())) continue;
      const f = out[name] || (out[name] = {type: (e.type || e.tagName).toLowerCase(), options: []});
      if (e.tagName === 'SELECT') f.options.push(...[...e.options].filter(o => o.value !== '' && !o.disabled)
        .map(o => o.value));
      else if (e.type === 'radio' || e.type === 'checkbox') f.options.push(e.value);
      for (const a of ['min', 'max', 'step', 'pattern', 'minlength', 'maxlength', 'placeholder', 'autocomplete'])
        if (e.getAttribute(a) !== null && f[a] === undefined) f[a] = e.getAttribute(a);
      const initial = e.tagName === 'SELECT' ? (e.querySelector('option[selected]') || {}).value
        : (e.type === 'radio' || e.type === 'checkbox') ? (e.defaultChecked ? e.value : undefined) : e.defaultValue;
      if (initial) f.value = initial;
    }
    fields[form.getAttribute('toolname')] = out;
  }
  const shown = [];
  const add = (v) => {  // a placeholder ("Choose a city...") is not a value
    v = (v || '').trim();
    if (v && v.length <= 64 && !/(\\.\\.\\.|…)$/.test(v) && !shown.includes(v)) shown.push(v);
  };
  for (const a of document.querySelectorAll('a[href]')) {
    const href = a.getAttribute('href');
    if (a.children.length === 0) add(a.textContent);
    for (const part of href.split(/[/#?&=]/).reverse())  // the last segment first: /hotel/aurelian's id
      if (/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/.test(part)) add(part.replace(/\\.html?$/, ''));
  }
  for (const e of document.querySelectorAll('[data-id], [data-sku], [data-slug]'))
    for (const a of ['data-id', 'data-sku', 'data-slug']) add(e.getAttribute(a));
  for (const e of document.querySelectorAll('li, option, td, [role=option]'))
    if (e.children.length === 0) add(e.textContent);
  return {fields, shown: shown.slice(0, 200)};
}"""

# autocomplete tokens (and input types) with a value a person would type
_TYPED = {
    "email": "ada@example.com",
    "tel": "+1 555 0100",
    "name": "Ada Lovelace",
    "given-name": "Ada",
    "family-name": "Lovelace",
    "postal-code": "94043",
    "street-address": "1 Main Street",
    "address-line1": "1 Main Street",
    "address-level2": "Springfield",
    "country": "US",
    "country-name": "United States",
    "organization": "Example Ltd",
    "url": "https://example.com/",
}
# words in a parameter's name, with a value a person would give
_NAMED = (
    ("email", "ada@example.com"),
    ("phone", "+1 555 0100"),
    ("name", "Ada Lovelace"),
    ("city", "Springfield"),
    ("address", "1 Main Street"),
    ("zip", "94043"),
    ("question", "What time is breakfast served?"),
    ("time", "19:00"),
    ("query", "coffee"),
    ("search", "coffee"),
    ("message", "Hello, a question about my order."),
    ("note", "No special requests."),
    ("comment", "Looks good to me."),
)


@dataclass
class PageValues:
    """What the page offers to draw inputs from (PAGE_VALUES_JS): each form tool's fields, and what it shows."""

    fields: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # tool -> field -> its attributes
    shown: list[str] = field(default_factory=list)  # ids in links, data-id attributes, short list items
    answered: list[str] = field(default_factory=list)  # ids other tools answered with (init's probe)
    today: date = field(default_factory=date.today)

    @classmethod
    def from_page(cls, raw: object, today: date | None = None) -> PageValues:
        data = raw if isinstance(raw, dict) else {}
        raw_fields = data.get("fields")
        fields: dict[str, dict[str, dict[str, Any]]] = raw_fields if isinstance(raw_fields, dict) else {}
        shown = [s for s in data.get("shown") or [] if isinstance(s, str)]
        return cls(fields, shown, today=today or date.today())


@dataclass
class Candidate:
    value: Any
    why: str  # "the form's select options", "the schema's enum", "shown on the page", ...


def _fits(schema: dict[str, Any], value: object) -> bool:
    return _valid(schema, value)


def _when(sub: dict[str, Any], field_: dict[str, Any], today: date) -> list[Candidate]:
    """Dates and times a site takes: a month ahead (a booking in the past is refused), within the field's bounds."""
    fmt = sub.get("format") or {"date": "date", "datetime-local": "date-time", "time": "time"}.get(
        field_.get("type", "")
    )
    ahead = today + timedelta(days=30)
    low = field_.get("min")
    if fmt == "date":
        day = max(ahead.isoformat(), low) if isinstance(low, str) else ahead.isoformat()
        return [Candidate(day, "a date a month ahead (format date)")]
    if fmt == "date-time":
        stamp = f"{ahead.isoformat()}T19:00" + (":00Z" if sub.get("format") == "date-time" else "")
        return [Candidate(stamp, "a time a month ahead (format date-time)")]
    if fmt == "time":
        at = low if isinstance(low, str) and low > "19:00" else "19:00"
        return [Candidate(at + (":00" if sub.get("format") == "time" else ""), "an evening time (format time)")]
    return []


def _from_field(field_: dict[str, Any]) -> list[Candidate]:
    """The form's own values: its default, its options, a number within its bounds, a typed value."""
    out: list[Candidate] = []
    if field_.get("value"):
        out.append(Candidate(field_["value"], "the form field's default"))
    kind = field_.get("type", "")
    out += [Candidate(v, f"the form's {kind} options") for v in field_.get("options") or [] if v not in ("", "on")]
    if kind in ("number", "range"):
        for key in ("min", "max"):
            if _number(field_.get(key)) is not None:
                out.append(Candidate(_number(field_[key]), f"the form field's {key}"))
    token = (field_.get("autocomplete") or "").split()[-1:] or [""]
    typed = _TYPED.get(token[0]) or _TYPED.get(kind)
    if typed:
        out.append(Candidate(typed, f"autocomplete {token[0] or kind}"))
    placeholder = field_.get("placeholder")
    if placeholder and not re.search(r"(?i)\be\.?g\.?\b|enter|type|search|\.\.\.|…", placeholder):
        out.append(Candidate(placeholder, "the form field's placeholder"))
    return out


def _number(text: object) -> int | float | None:
    try:
        value = float(str(text))
    except ValueError:
        return None
    return int(value) if value.is_integer() else value


def _from_schema(sub: dict[str, Any]) -> list[Candidate]:
    out: list[Candidate] = []
    if "const" in sub:
        out.append(Candidate(sub["const"], "the schema's const"))
    if "default" in sub:
        out.append(Candidate(sub["default"], "the schema's default"))
    out += [
        Candidate(v, "the schema's examples") for v in sub.get("examples") or [] if isinstance(sub["examples"], list)
    ]
    out += [Candidate(v, "the schema's enum") for v in sub.get("enum") or [] if isinstance(sub["enum"], list)]
    described = sub["description"] if isinstance(sub.get("description"), str) else ""
    out += [Candidate(v, "an example in its description") for v in description_examples(described)]
    fmt = {"email": "ada@example.com", "uri": "https://example.com/", "url": "https://example.com/"}
    if sub.get("format") in fmt:
        out.append(Candidate(fmt[sub["format"]], f"format {sub['format']}"))
    return out


_EXAMPLES = re.compile(r"(?i)\b(?:e\.\s?g\.?|for example|such as)[,:]?\s*([^)\n]+)")


def description_examples(text: str) -> list[str]:
    """The values a description gives as examples: "(e.g. '14:00')", "(e.g. Montpelier, Paris, New York)"."""
    out: list[str] = []
    for match in _EXAMPLES.finditer(text):
        quoted = re.findall(r"['\"`]([^'\"`]{1,64})['\"`]", match.group(1))
        items = quoted or re.split(r",\s*|\s+or\s+", match.group(1))
        out += [i.strip().rstrip(".") for i in items if 0 < len(i.strip().rstrip(".")) <= 40]
    return out


def _from_page(name: str, sub: dict[str, Any], shown: list[str], why: str) -> list[Candidate]:
    """An id the page links to or lists, for a parameter that takes an id (its name says so, or a pattern)."""
    id_like = re.search(r"(?i)(^|_|[a-z])(id|ids|sku|slug|code|key|ref)$", name) or "pattern" in sub
    query_like = re.search(r"(?i)^(q|query|search|term|keywords?|text|product|item|title)$", name)
    if not (id_like or query_like) or sub.get("type") not in ("string", "integer", None):
        return []
    out = []
    for text in shown:
        value: Any = _number(text) if sub.get("type") == "integer" else text
        if value is not None and _fits(sub, value):
            out.append(Candidate(value, why))
    return out[:5]


def _from_name(name: str, sub: dict[str, Any]) -> list[Candidate]:
    low = name.lower()
    out = [Candidate(v, f"a usual {word}") for word, v in _NAMED if word in low and sub.get("type") in ("string", None)]
    if sub.get("type") in ("integer", "number") and "minimum" not in sub:
        out.append(Candidate(1, "a small count"))
    return out


def candidates(
    name: str, sub: object, page: PageValues | None, tool: str = "", today: date | None = None
) -> list[Candidate]:
    """Every realistic value of one parameter, most realistic first, each valid under its schema."""
    if not isinstance(sub, dict):
        return []
    page = page or PageValues()
    field_ = page.fields.get(tool, {}).get(name, {})
    found = _from_field(field_) + _from_schema(sub) + _when(sub, field_, today or page.today)
    found += _from_page(name, sub, page.answered, "an id another tool answered with")
    found += _from_page(name, sub, page.shown, "shown on the page (a link or a list)") + _from_name(name, sub)
    out: list[Candidate] = []
    for c in found:
        value = c.value
        if sub.get("type") in ("integer", "number") and isinstance(value, str):
            value = _number(value)
        if value is not None and _fits(sub, value) and all(o.value != value for o in out):
            out.append(Candidate(value, c.why))
    return out


def _own(candidate: Candidate) -> bool:
    """A value the site itself gives: its form's, its schema's, its description's."""
    return candidate.why.startswith(("the form", "the schema", "an example", "autocomplete"))


def realistic_inputs(
    schema: object, page: PageValues | None = None, tool: str = "", tries: int = 4
) -> list[SmokeInput]:
    """Up to ``tries`` valid inputs built from the page's and the schema's own values (the required parameters,
    and each optional one the form or the page gives a value for), the most realistic first: the next one is
    what to retry with when the site refuses one. A parameter with no such value takes the schema's draw.
    Each input's label says where every value came from."""
    parts = _object_schema(schema)
    if parts is None:
        return []
    schema, props, required = parts
    found = {name: candidates(name, sub, page, tool) for name, sub in props.items()}
    # the required parameters, and each optional one the form or the schema itself gives a value for
    wanted = [n for n in props if n in required or any(_own(c) for c in found[n])]
    drawn = _draw({**schema, "properties": {k: props[k] for k in wanted}, "required": wanted}) if wanted else {}
    out: list[SmokeInput] = []
    for i in range(tries):
        args: dict[str, Any] = {}
        whys: list[str] = []
        for name in wanted:
            options = found[name]
            if options:
                pick = options[min(i, len(options) - 1)]
                args[name], why = pick.value, pick.why
            elif drawn is not None and name in drawn:
                args[name], why = drawn[name], "drawn from the schema"
            else:
                break
            whys.append(f"{name} {why}")
        else:
            label = "realistic: " + ("; ".join(whys) if whys else "no parameters")
            if _valid(schema, args) and all(o.args != args for o in out):
                out.append(SmokeInput(label, args, True))
    return out
