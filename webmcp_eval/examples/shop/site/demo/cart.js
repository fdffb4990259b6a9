// The cart page: its own tools, registered with an AbortController and
// withdrawn when the cart is emptied (nothing left to remove).
(() => {
  const mc = document.modelContext;
  const read = () => JSON.parse(localStorage.getItem('cart') || '{"items": []}');
  let removal = null;

  function render() {
    const items = read().items;
    document.getElementById('cart').replaceChildren(
      ...items.map((item) => {
        const li = document.createElement('li');
        li.textContent = `${item.quantity} × ${item.id}`;
        return li;
      }),
    );
    if (items.length && !removal) {
      removal = new AbortController();
      mc.registerTool(
        {
          name: 'empty_cart',
          description: 'Remove everything from the cart.',
          inputSchema: { type: 'object', properties: {} },
          execute: async () => {
            localStorage.setItem('cart', JSON.stringify({ items: [] }));
            document.getElementById('status').textContent = 'The cart is empty';
            render();
            return { status: 'ok', data: { items: [] } };
          },
        },
        { signal: removal.signal },
      );
    } else if (!items.length && removal) {
      removal.abort();
      removal = null;
    }
  }

  mc.registerTool({
    name: 'view_cart',
    description: 'What is in the cart.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
    execute: async () => ({ status: 'ok', data: read() }),
  });
  render();
})();
