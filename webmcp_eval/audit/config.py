"""How a suite tunes the audit: ``audit: {rules: {RULE: off | SEVERITY | {severity, OPTION: value}}}`` in suite.yaml.

    audit:
      rules:
        too-many-tools: {max: 30}
        name-inconsistent: note
        description-length: off
        smoke-slow: {severity: error, max_ms: 2000}

Every rule id, severity and option is checked: an unknown one is an error
that names its field, never a silently ignored setting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from webmcp_eval.audit.model import SEVERITIES, Severity
from webmcp_eval.audit.rulebook import RULES, Rule
from webmcp_eval.errors import InvalidInput


class AuditConfigError(InvalidInput, ValueError):
    """A setting that cannot be used: ``field`` is its dotted path under suite.yaml's audit key."""

    def __init__(self, field_: str, message: str) -> None:
        super().__init__(f"{field_}: {message}")
        self.field = field_


@dataclass
class RuleSetting:
    enabled: bool = True
    severity: Severity | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class AuditConfig:
    settings: dict[str, RuleSetting] = field(default_factory=dict)

    def _rule(self, rule_id: str) -> Rule:
        return RULES[rule_id]

    def enabled(self, rule_id: str) -> bool:
        return self.settings.get(rule_id, RuleSetting()).enabled

    def severity(self, rule_id: str) -> Severity:
        return self.settings.get(rule_id, RuleSetting()).severity or self._rule(rule_id).severity

    def options(self, rule_id: str) -> dict[str, Any]:
        return {**self._rule(rule_id).options, **self.settings.get(rule_id, RuleSetting()).options}


def _typed(value: object, default: Any) -> bool:
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int | float):
        return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
    if isinstance(default, list):
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, type(default))


def parse_audit_config(data: object) -> AuditConfig:
    """suite.yaml's ``audit`` value as a config; AuditConfigError names the first bad field."""
    if data is None:
        return AuditConfig()
    if not isinstance(data, dict):
        raise AuditConfigError("audit", "give a mapping with a 'rules' key")
    unknown = sorted(set(data) - {"rules"})
    if unknown:
        raise AuditConfigError(f"audit.{unknown[0]}", "unknown key (the audit takes 'rules')")
    rules = data.get("rules") or {}
    if not isinstance(rules, dict):
        raise AuditConfigError("audit.rules", "give a mapping of rule id -> off, a severity, or {severity, options}")
    settings: dict[str, RuleSetting] = {}
    for rule_id, value in rules.items():
        where = f"audit.rules.{rule_id}"
        if rule_id not in RULES:
            raise AuditConfigError(where, f"unknown rule (known: {', '.join(sorted(RULES))})")
        if value is False or value == "off":
            settings[rule_id] = RuleSetting(enabled=False)
        elif value in SEVERITIES:
            settings[rule_id] = RuleSetting(severity=value)
        elif isinstance(value, dict):
            settings[rule_id] = _setting(RULES[rule_id], value, where)
        else:
            raise AuditConfigError(where, f"give off, one of {', '.join(SEVERITIES)}, or a mapping; got {value!r}")
    return AuditConfig(settings)


def _setting(rule: Rule, value: dict[str, Any], where: str) -> RuleSetting:
    setting = RuleSetting()
    for key, item in value.items():
        if key == "severity":
            if item == "off" or item is False:
                setting.enabled = False
            elif item in SEVERITIES:
                setting.severity = item
            else:
                raise AuditConfigError(f"{where}.severity", f"give off or one of {', '.join(SEVERITIES)}")
        elif key in rule.options:
            if not _typed(item, rule.options[key]):
                raise AuditConfigError(f"{where}.{key}", f"expected a value like {rule.options[key]!r}, got {item!r}")
            if key == "pattern":  # compiled when the rule runs: a bad one is the config's line, not a crash then
                try:
                    re.compile(item)
                except (re.error, OverflowError, RecursionError) as err:
                    raise AuditConfigError(f"{where}.{key}", f"not a valid regular expression: {err}") from None
            if problem := _out_of_range(key, item):
                raise AuditConfigError(f"{where}.{key}", problem)
            setting.options[key] = item
        else:
            known = ", ".join(["severity", *rule.options])
            raise AuditConfigError(f"{where}.{key}", f"unknown option (this rule takes: {known})")
    return setting


MAX_MS = 600_000  # a time option beyond ten minutes is a typo (and past 2^31 ms the browser's timer overflows)
MAX_COUNT = 1_000_000_000


def _out_of_range(key: str, value: object) -> str | None:
    """Why a number option cannot be used as given (negative, or too large to mean anything), or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return "give a finite number"
    top = MAX_MS if key.endswith("_ms") else MAX_COUNT
    if not 0 <= value <= top:
        return f"give 0 to {top}"
    return None
