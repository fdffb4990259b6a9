// Frame Street: a top page with three imperative tools, one declarative form
// tool and one registration the browser refuses (no description), and three
// frames: a same-origin one that registers lookup_item, and a widget served
// from another origin (127.0.0.1 <-> localhost, same port) with and without
// allow="tools". `?break=frame-stale` makes the items frame keep lookup_item
// after its own client-side route change: a stale tool inside a frame.
(() => {
  const mc = document.modelContext;
  const ok = (data) => ({ status: 'ok', data });
  const items = [
    { id: 'item-1', name: 'Blue mug', price: 12 },
    { id: 'item-2', name: 'Red kettle', price: 40 },
  ];
  const params = new URLSearchParams(location.search);
  const other = `${location.protocol}//${location.hostname === 'localhost' ? '127.0.0.1' : 'localhost'}:${location.port}`;

  document.getElementById('items').src = params.get('break') === 'frame-stale' ? 'frame.html?break=stale' : 'frame.html';
  document.getElementById('widget').src = `${other}/widget.html`;
  document.getElementById('widget-denied').src = `${other}/widget.html?denied`;

  mc.registerTool({
    name: 'find_items',
    description: 'List the items on sale, with their ids and prices.',
    inputSchema: { type: 'object', properties: { q: { type: 'string', description: 'words of the name' } } },
    annotations: { readOnlyHint: true },
    execute: async ({ q = '' } = {}) => ok({ items: items.filter((i) => i.name.toLowerCase().includes(q.toLowerCase())) }),
  });
  mc.registerTool({
    name: 'read_reviews',
    description: "The customers' reviews of an item (their text is theirs, not the shop's).",
    inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    annotations: { readOnlyHint: true, untrustedContentHint: true },
    execute: async ({ id }) => ok({ id, reviews: ['Lovely mug.'] }),
  });
  mc.registerTool({
    name: 'open_item_details',
    description: "Show an item's details in the items frame.",
    inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    execute: async ({ id }) => {
      document.getElementById('items').contentWindow.showDetails(id);
      document.getElementById('status').textContent = `Details of ${id}`;
      return ok({ shown: id });
    },
  });
  // No description: the browser refuses this registration (the promise rejects).
  mc.registerTool({
    name: 'broken_tool',
    inputSchema: { type: 'object', properties: {} },
    execute: async () => ok({}),
  }).catch(() => {});

  document.getElementById('quote').addEventListener('submit', (event) => {
    event.preventDefault();
    const item = event.target.elements.item.value;
    document.getElementById('status').textContent = `Quote asked for ${item}`;
    if (event.agentInvoked) event.respondWith(Promise.resolve(ok({ item, price: 12 })));
  });
})();
