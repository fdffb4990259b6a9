// webmcp-eval shim: installed as an init script, so it runs before any page
// script. It wraps the WebMCP registration API to log every registration,
// unregistration (signal abort) and call, with arguments, result or error,
// timing, route, frame and registration instance. Declarative tools (<form toolname>)
// are registered by the browser itself: the shim watches those forms and the
// toolactivated event, and logs them the same way (declarative: true). Where
// the browser has no native WebMCP it provides a spec-shaped polyfill, so the
// runner still works there.
// Events go to the runner through the exposed binding __webmcpEvalReport
// (they survive reloads that way) and stay in window.__webmcpEval.log.
// The shim runs in every frame: each event says which frame's document it
// came from (URL, origin, whether it is the top page or shares its origin, the
// frame element's allow attribute), so a frame's tools are never taken for the
// top page's.
(() => {
  if (window.__webmcpEval) return;
  const t0 = performance.timeOrigin;
  const now = () => t0 + performance.now();
  let seq = 0;
  let nextInstance = 1;
  const log = [];
  const active = new Map(); // instance -> {name, tool, route}
  // What the runner's settle wait asks the page (quiet() below): reports the runner has not yet taken,
  // registrations whose promise is still open, and when the document last changed.
  let unreported = 0;
  let openRegistrations = 0;
  let lastMutation = -1e9;

  const clone = (value) => {
    try {
      return value === undefined ? null : JSON.parse(JSON.stringify(value));
    } catch (e) {
      return { unserialisable: String(value) };
    }
  };
  const emit = (event) => {
    event.seq = seq++;
    event.t = now();
    event.route = location.pathname;
    event.document = documentId;
    event.frame = frameInfo();
    log.push(event);
    if (typeof window.__webmcpEvalReport !== "function") return;
    // JSON text, not the object: Playwright checks an object's serialised form value by value (twice the time of
    // a page that registers 3,000 tools); an event JSON cannot write (a cycle, a BigInt) goes as it is, alone
    let text = null;
    try {
      text = JSON.stringify(event);
    } catch (e) {
      /* sent as the object */
    }
    if (text === null) {
      flush();
      send(event);
      return;
    }
    // The events of one run of the page's scripts go in one report (a JSON array): each report is a binding call,
    // three protocol messages between the page, Playwright's driver and the runner. They go in a microtask, once
    // the script that emitted them has run and before any other task of the page (a runner's question included),
    // and at once past BATCH_CHARS.
    queued.push(text);
    queuedChars += text.length;
    if (queuedChars > BATCH_CHARS) flush();
    else if (queued.length === 1) queueMicrotask(flush);
  };
  const BATCH_CHARS = 262144;
  let queued = [];
  let queuedChars = 0;
  function flush() {
    if (!queued.length) return;
    const texts = queued;
    queued = [];
    queuedChars = 0;
    send(texts.length === 1 ? texts[0] : `[${texts.join(",")}]`);
  }
  function send(sent) {
    try {
      const taken = window.__webmcpEvalReport(sent);
      if (taken && typeof taken.then === "function") {
        unreported++;
        const done = () => unreported--;
        taken.then(done, done);
      }
    } catch (e) {
      /* the binding may be gone while the page unloads; the log keeps it */
    }
  }
  const documentId = `${Math.floor(now())}-${Math.random().toString(36).slice(2, 8)}`;

  function frameInfo() {
    const top = window.top === window;
    const info = { url: location.href, origin: location.origin, top, same_origin: top };
    if (!top) {
      try {
        info.same_origin = window.top.location.origin === location.origin;
      } catch (e) {
        info.same_origin = false; // a cross-origin top page cannot be read
      }
      // The frame element is readable only when the parent shares our origin;
      // otherwise the runner reads its allow attribute from outside.
      if (window.frameElement) info.allow = window.frameElement.getAttribute("allow");
    }
    try {
      const policy = document.permissionsPolicy || document.featurePolicy;
      if (policy && policy.features().includes("tools")) info.tools_allowed = policy.allowsFeature("tools");
    } catch (e) {
      /* no permissions policy API: unknown */
    }
    return info;
  }

  const native = !!(document.modelContext && document.modelContext.registerTool);
  const mc = native ? document.modelContext : makePolyfill();
  const proto = native ? Object.getPrototypeOf(mc) : mc;
  const originalRegister = proto.registerTool;

  // The pytest plugin's mocks (webmcp.mock): the test's answer instead of the tool's own execute. A fixed
  // answer is held in the page; for a callable one the page asks the test through a binding.
  function mockOf(name) {
    const mocks = window.__webmcpEvalMocks;
    if (!mocks || !Object.prototype.hasOwnProperty.call(mocks, name)) return null;
    const mock = mocks[name];
    return async (input) => {
      const answer = mock.ask ? await window.__webmcpEvalMock(name, clone(input)) : mock;
      if (answer.error !== undefined && answer.error !== null) {
        const thrown = new Error(answer.error);
        thrown.webmcpEvalMock = true; // logged in the test's own words, without "Error: "
        throw thrown;
      }
      return clone(answer.result);
    };
  }

  function wrapExecute(instance, tool) {
    const execute = tool.execute;
    return async function (input, client) {
      const callId = `${instance}.${seq}`;
      const started = now();
      if (!active.has(instance)) {
        // A stale handler: its registration was withdrawn. Refuse, and say so.
        emit({ type: "refused", callId, instance, name: tool.name, args: clone(input) });
        return {
          status: "error",
          code: "TOOL_UNAVAILABLE",
          retryable: false,
          message: "This tool is no longer registered on this page.",
        };
      }
      const mock = mockOf(tool.name);
      emit({ type: "call", callId, instance, name: tool.name, args: clone(input), ...(mock ? { mocked: true } : {}) });
      try {
        const result = mock ? await mock(input) : await execute.call(this, input, client);
        emit({ type: "result", callId, instance, name: tool.name, result: clone(result), ms: now() - started });
        return result;
      } catch (err) {
        const said = err && err.webmcpEvalMock ? err.message : String(err);
        emit({ type: "error", callId, instance, name: tool.name, error: said, ms: now() - started });
        throw err;
      }
    };
  }

  // Where the page called registerTool: the first frame of the stack that is not the shim's own (the script's
  // URL, line and column, 1-based, as DevTools shows them); null when no frame names a URL (an eval).
  const shimFile = ((new Error().stack || "").split("\n")[1] || "").replace(/^\s*at\s+/, "");
  function callerOf(stack) {
    const lines = String(stack || "").split("\n").slice(1);
    for (const line of lines) {
      const m = /((?:https?|file|blob|chrome-extension):[^\s()]+):(\d+):(\d+)\)?\s*$/.exec(line);
      if (!m || (shimFile && shimFile.includes(m[1]))) continue;
      return { url: m[1], line: Number(m[2]), column: Number(m[3]) };
    }
    return null;
  }

  function registerTool(tool, options) {
    const instance = nextInstance++;
    const signal = options && options.signal;
    const described = {
      name: tool && tool.name,
      description: tool && tool.description,
      inputSchema: clone(tool && tool.inputSchema),
      annotations: clone(tool && tool.annotations),
      source: callerOf(new Error().stack),
    };
    const wrapped = Object.assign({}, tool, { execute: wrapExecute(instance, tool) });
    let result;
    try {
      result = originalRegister.call(this, wrapped, options);
    } catch (err) {
      emit({ type: "register_error", instance, ...described, error: String(err) });
      throw err;
    }
    const registered = () => {
      active.set(instance, { name: described.name, route: location.pathname });
      emit({ type: "register", instance, ...described });
    };
    const withdrawn = () => {
      if (active.delete(instance)) emit({ type: "unregister", instance, name: described.name });
    };
    if (signal) {
      if (signal.aborted) return result;
      signal.addEventListener("abort", withdrawn, { once: true });
    }
    if (result && typeof result.then === "function") {
      registered(); // listed at once; a rejection below withdraws it again
      openRegistrations++;
      return result.then(
        (v) => {
          openRegistrations--;
          return v;
        },
        (err) => {
          openRegistrations--;
          active.delete(instance);
          emit({ type: "register_error", instance, ...described, error: String(err) });
          throw err;
        },
      );
    }
    registered();
    return result;
  }

  function makePolyfill() {
    // Spec-shaped: registerTool(tool, {signal}) -> Promise, getTools(), executeTool().
    const tools = new Map();
    const target = new EventTarget();
    const poly = {
      registerTool(tool, options) {
        if (!tool || typeof tool.name !== "string" || typeof tool.execute !== "function") {
          return Promise.reject(new TypeError("registerTool needs a name and an execute function"));
        }
        if (tools.has(tool.name)) {
          return Promise.reject(new DOMException("Duplicate tool name", "InvalidStateError"));
        }
        const signal = options && options.signal;
        if (signal && signal.aborted) return Promise.resolve();
        tools.set(tool.name, tool);
        if (signal) signal.addEventListener("abort", () => tools.get(tool.name) === tool && tools.delete(tool.name), { once: true });
        target.dispatchEvent(new Event("toolchange"));
        return Promise.resolve();
      },
      async getTools() {
        return [...tools.values()].map((t) => ({
          name: t.name,
          description: t.description || "",
          inputSchema: t.inputSchema || null,
          annotations: t.annotations || null,
        }));
      },
      async executeTool(name, input) {
        const tool = tools.get(name);
        if (!tool) throw new DOMException(`No tool named ${name}`, "NotFoundError");
        return tool.execute(input || {}, { requestUserInteraction: async (cb) => cb() });
      },
      addEventListener: target.addEventListener.bind(target),
      removeEventListener: target.removeEventListener.bind(target),
    };
    Object.defineProperty(document, "modelContext", { value: poly, configurable: true });
    return poly;
  }

  proto.registerTool = registerTool;
  if (!navigator.modelContext) {
    // The older alias some pages still use.
    try {
      Object.defineProperty(navigator, "modelContext", { value: mc, configurable: true });
    } catch (e) {
      /* not fatal */
    }
  }

  // ---- declarative tools: <form toolname=… tooldescription=…> --------------------
  // Chromium registers such a form as a tool when it is in the document and
  // withdraws it when the form or its toolname goes. When an agent calls it the
  // browser fills the fields, fires toolactivated on document.modelContext and,
  // with toolautosubmit, submits the form; the page answers through the submit
  // event's respondWith(), or the form navigates and the answer is empty.
  const forms = new Map(); // form -> {instance, name}
  const pending = new Map(); // form -> the call in progress on it

  function formArgs(form) {
    // The fields as the agent's input: typed as Chromium types the form's schema.
    const args = {};
    for (const el of form.elements) {
      const type = (el.type || "").toLowerCase();
      if (!el.name || el.disabled || ["submit", "button", "reset", "file", "image"].includes(type)) continue;
      if (type === "checkbox") args[el.name] = el.checked;
      else if (type === "radio") {
        if (el.checked) args[el.name] = el.value;
      } else if (el.value !== "") args[el.name] = type === "number" || type === "range" ? Number(el.value) : el.value;
    }
    return args;
  }

  function withdrawForm(form) {
    const known = forms.get(form);
    forms.delete(form);
    if (known && active.delete(known.instance)) {
      emit({ type: "unregister", instance: known.instance, name: known.name, declarative: true });
    }
  }

  function scanForms() {
    const present = new Set(document.querySelectorAll("form[toolname]"));
    for (const form of forms.keys()) {
      if (!present.has(form) || forms.get(form).name !== form.getAttribute("toolname")) withdrawForm(form);
    }
    for (const form of present) {
      if (forms.has(form)) continue;
      const instance = nextInstance++;
      const name = form.getAttribute("toolname");
      forms.set(form, { instance, name });
      active.set(instance, { name, route: location.pathname });
      emit({
        type: "register",
        instance,
        name,
        description: form.getAttribute("tooldescription") || "",
        inputSchema: null, // the browser builds it from the fields: the catalog has it
        annotations: form.hasAttribute("toolautosubmit") ? { autosubmit: true } : null,
        declarative: true,
      });
    }
  }

  new MutationObserver(scanForms).observe(document, {
    childList: true,
    subtree: true,
    attributes: true,
    attributeFilter: ["toolname"],
  });
  document.addEventListener("DOMContentLoaded", scanForms);
  // Any change of the document: the settle wait counts the page settled only once it stops changing.
  new MutationObserver(() => {
    lastMutation = performance.now();
  }).observe(document, { childList: true, subtree: true, attributes: true, characterData: true });

  function settle(form, event) {
    const call = pending.get(form);
    if (!call) return;
    pending.delete(form);
    emit({ ...event, callId: call.callId, instance: call.instance, name: call.name, ms: now() - call.started, declarative: true });
  }

  if (native && typeof mc.addEventListener === "function") {
    mc.addEventListener("toolactivated", (ev) => {
      scanForms(); // a form added in this very task may not have been seen yet
      for (const [form, known] of forms) {
        if (known.name !== ev.toolName) continue;
        const call = { callId: `${known.instance}.${seq}`, instance: known.instance, name: known.name, started: now() };
        pending.set(form, call);
        emit({ type: "call", callId: call.callId, instance: call.instance, name: call.name, args: clone(formArgs(form)), declarative: true });
        return;
      }
    });
  }

  const submitProto = window.SubmitEvent && SubmitEvent.prototype;
  if (submitProto && typeof submitProto.respondWith === "function") {
    const respondWith = submitProto.respondWith;
    submitProto.respondWith = function (answer) {
      const form = this.target;
      if (pending.has(form)) {
        pending.get(form).answered = true;
        Promise.resolve(answer).then(
          (value) => settle(form, { type: "result", result: clone(value) }),
          (err) => settle(form, { type: "error", error: String(err) }),
        );
      }
      return respondWith.call(this, answer);
    };
  }
  window.addEventListener(
    "submit",
    (ev) => {
      const form = ev.target;
      // respondWith() is only allowed while the event is dispatched: after it, an
      // unanswered call has its answer, empty, and the form may be navigating away.
      setTimeout(() => {
        const call = pending.get(form);
        if (call && !call.answered) settle(form, { type: "result", result: null, submitted: !ev.defaultPrevented });
      }, 0);
    },
    true,
  );

  // Clicks, so the runner can tell a human's (scripted) click from one the
  // page or the agent made on the confirmation control.
  document.addEventListener(
    "click",
    (ev) => {
      const el = ev.target && ev.target.closest && ev.target.closest("button, a, [role=button], input[type=submit]");
      if (!el) return;
      emit({
        type: "click",
        trusted: ev.isTrusted,
        tag: el.tagName.toLowerCase(),
        text: (el.getAttribute("aria-label") || el.textContent || el.value || "").trim().slice(0, 80),
      });
    },
    true,
  );

  window.__webmcpEval = {
    native,
    log,
    active: () => [...active.entries()].map(([instance, r]) => ({ instance, ...r })),
    // The host's path when there is no native WebMCP.
    async tools() {
      return mc.getTools();
    },
    async call(name, input) {
      return mc.executeTool(name, input);
    },
    // For the settle wait: what the page still has under way (reports not yet taken by the runner,
    // registrations not yet resolved) and how long ago the document last changed.
    quiet() {
      return { pending: unreported + openRegistrations, mutated_ms_ago: performance.now() - lastMutation };
    },
    // A mark in the log: every event before it has been reported before it.
    mark(label) {
      emit({ type: "mark", label });
    },
  };
  emit({ type: "loaded", native });
})();
