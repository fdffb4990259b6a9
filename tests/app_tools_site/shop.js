// Satchel Shop: store_policy belongs to the whole app; the routes' tools belong to their route.
const view = document.getElementById("view");
const status = document.getElementById("status");
const leak = new URLSearchParams(location.search).has("leak");
let routeTools = [];

document.modelContext.registerTool({
  name: "store_policy",
  description: "The shop's return policy, on every page of the shop.",
  inputSchema: { type: "object", properties: {} },
  annotations: { readOnlyHint: true },
  execute: () => ({ status: "ok", policy: "30 days" }),
});

function register(tool) {
  const controller = new AbortController();
  document.modelContext.registerTool(tool, { signal: controller.signal });
  routeTools.push(controller);
}

function leaveRoute() {
  if (!leak) routeTools.forEach((c) => c.abort());
  routeTools = [];
}

function home() {
  view.textContent = "Welcome: browse our satchels.";
  register({
    name: "open_satchels",
    description: "Opens the list of satchels.",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true },
    execute: () => {
      go("/satchels");
      return { status: "ok", opened: "/satchels" };
    },
  });
}

function satchels() {
  view.textContent = "Satchels: Classic, Weekender.";
  status.textContent = "Showing 2 satchels";
  register({
    name: "list_satchels",
    description: "Lists the satchels shown.",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true },
    execute: () => ({ status: "ok", satchels: ["Classic", "Weekender"] }),
  });
}

function go(path) {
  leaveRoute();
  history.pushState({}, "", path);
  route();
}

function route() {
  if (location.pathname.startsWith("/satchels")) satchels();
  else home();
}

route();
