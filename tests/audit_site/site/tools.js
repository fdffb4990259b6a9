// Shared helper of the audit test site: register a tool, and a POST that the server records.
window.reg = (tool, signal) => {
  try {
    const done = document.modelContext.registerTool(tool, signal ? { signal } : undefined);
    if (done && done.catch) done.catch(() => {});
  } catch (e) {
    /* a refusal: the audit reads it from the shim's log */
  }
};
window.recordWrite = (what) => fetch("/api/log", { method: "POST", body: JSON.stringify({ what }) });
window.obj = (properties, required) => ({ type: "object", properties, ...(required ? { required } : {}) });
window.str = (description, extra) => ({ type: "string", description, ...(extra || {}) });
