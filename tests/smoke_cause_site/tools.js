// The shop's imperative tools. Each one is made for one cause of a smoke verdict.
const mc = document.modelContext;

// No inputSchema at all: WebMCP allows it, the tool takes no parameters.
mc.registerTool({
  name: "list_teas",
  description: "Lists the teas the shop sells today, with their prices.",
  annotations: { readOnlyHint: true },
  execute: () => ({ teas: [{ name: "sencha", price: 12 }] }),
});

// The form's tool, registered imperatively from the form's own fields; it answers a validation list.
mc.registerTool({
  name: "order_tea",
  description: "Orders an amount of one tea from the shop for delivery.",
  inputSchema: {
    type: "object",
    properties: {
      tea: { type: "string", enum: ["sencha", "oolong"], description: "the tea" },
      grams: { type: "integer", minimum: 50, maximum: 500, description: "how much" },
    },
    required: ["tea", "grams"],
  },
  annotations: { readOnlyHint: true },
  execute: ({ tea, grams } = {}) => {
    const problems = [];
    if (!["sencha", "oolong"].includes(tea)) problems.push({ field: "tea", value: tea, message: "Choose sencha or oolong" });
    if (!Number.isInteger(grams) || grams < 50 || grams > 500)
      problems.push({ field: "grams", value: grams, message: "Between 50 and 500" });
    return problems.length ? problems : { ordered: { tea, grams } };
  },
});

// Answers isError to every call, as a tool that times out waiting for its own UI does.
mc.registerTool({
  name: "search_flights",
  description: "Searches the flights to a city on a date and lists them.",
  inputSchema: { type: "object", properties: { city: { type: "string", description: "where to" } } },
  annotations: { readOnlyHint: true },
  execute: () => ({ isError: true, content: [{ type: "text", text: "Timed out waiting for UI to update" }] }),
});

// "review" as a verb: nothing others wrote.
mc.registerTool({
  name: "open_cart",
  description: "Opens the shopping cart to review items and proceed to checkout.",
  annotations: { readOnlyHint: true },
  execute: () => ({ items: [] }),
});

// A refusal said as success: false with a reason in words no heuristic knows.
mc.registerTool({
  name: "check_stock",
  description: "Says how many grams of a tea the shop has in stock.",
  inputSchema: { type: "object", properties: { tea: { type: "string", enum: ["sencha"] } }, required: ["tea"] },
  annotations: { readOnlyHint: true },
  execute: ({ tea }) => (tea === "sencha" ? { success: true, grams: 120 } : { success: false, reason: "Which tea?" }),
});

// A name the browser refuses: where the page tried is said with the refusal.
try {
  mc.registerTool({ name: "bad name!", description: "A tool whose name no agent can call.", execute: () => "x" });
} catch (e) {
  /* refused: the audit reports it */
}
