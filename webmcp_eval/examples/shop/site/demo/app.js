// Leaf & Cup: a static tea shop with WebMCP tools and no server state.
// The cart lives in localStorage; tools register late: two after the tea list
// is fetched, one after a timer; the newsletter form is a declarative tool.
// The Offers link is a client-side route (history.pushState): it withdraws the
// shop's tools and the form and registers its own. `?break=stale` leaves the
// form registered there: a deliberate stale tool, for the stale check to catch.
(() => {
  const mc = document.modelContext;
  const breakStale = new URLSearchParams(location.search).get('break') === 'stale';
  const shopTools = new AbortController(); // the shop route's tools go with the route
  const ok = (data) => ({ status: 'ok', data });
  const fail = (code, message) => ({ status: 'error', code, message });
  const CDN = '__CDN__';

  const cart = {
    read: () => JSON.parse(localStorage.getItem('cart') || '{"items": []}'),
    write(value) {
      localStorage.setItem('cart', JSON.stringify(value));
      render();
    },
  };
  let products = [];

  function render() {
    document.getElementById('cart').replaceChildren(
      ...cart.read().items.map((item) => {
        const li = document.createElement('li');
        const product = products.find((p) => p.id === item.id);
        li.textContent = `${item.quantity} × ${product ? product.name : item.id}`;
        return li;
      }),
    );
  }

  function addToCart({ product_id, quantity = 1 }) {
    const product = products.find((p) => p.id === product_id);
    if (!product) return fail('NOT_FOUND', `no tea ${product_id}`);
    if (!Number.isInteger(quantity) || quantity < 1) return fail('INVALID_ARGUMENT', 'quantity must be 1 or more');
    const value = cart.read();
    const item = value.items.find((i) => i.id === product_id);
    if (item) item.quantity += quantity;
    else value.items.push({ id: product_id, quantity });
    cart.write(value);
    document.getElementById('status').textContent = `Added ${quantity} × ${product.name}`;
    return ok({ cart: value });
  }

  fetch('products.json')
    .then((response) => response.json())
    .then((list) => {
      products = list;
      document.getElementById('loading').remove();
      document.getElementById('products').replaceChildren(
        ...list.map((p) => {
          const li = document.createElement('li');
          li.textContent = `${p.name}: NT$${p.price}`;
          return li;
        }),
      );
      render();
      mc.registerTool({
        name: 'list_products',
        description: 'List the teas on sale, with their ids and prices.',
        inputSchema: { type: 'object', properties: {} },
        annotations: { readOnlyHint: true },
        execute: async () => ok({ products }),
      }, { signal: shopTools.signal });
      mc.registerTool({
        name: 'add_to_cart',
        description: 'Put a tea into the cart.',
        inputSchema: {
          type: 'object',
          properties: {
            product_id: { type: 'string', description: 'a tea id from list_products' },
            quantity: { type: 'integer', minimum: 1 },
          },
          required: ['product_id'],
        },
        execute: async (input) => addToCart(input || {}),
      }, { signal: shopTools.signal });
    });

  // Registered a while after load, as pages do once a widget has initialised.
  setTimeout(() => {
    mc.registerTool({
      name: 'share_cart',
      description: 'Send the cart to the shop’s sharing service and get a link to it.',
      inputSchema: { type: 'object', properties: {} },
      execute: async () => {
        // A write to another host: the sharing service is not this site.
        const response = await fetch(`${CDN}/share`, { method: 'POST', body: JSON.stringify(cart.read()) });
        return ok({ shared: response.status < 500, status: response.status });
      },
    }, { signal: shopTools.signal });
  }, 400);

  function showOffers() {
    shopTools.abort();
    if (!breakStale) document.getElementById('newsletter')?.remove();
    document.getElementById('shop').hidden = true;
    document.getElementById('offers').hidden = false;
    mc.registerTool({
      name: 'list_offers',
      description: 'The offers of the week.',
      inputSchema: { type: 'object', properties: {} },
      annotations: { readOnlyHint: true },
      execute: async () => ok({ offers: ['Oolong: second bag half price'] }),
    });
  }

  document.getElementById('offers-link').addEventListener('click', (event) => {
    event.preventDefault();
    history.pushState({}, '', 'offers.html');
    showOffers();
  });

  document.getElementById('newsletter').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.target;
    const email = form.elements.email.value;
    const topic = form.elements.topic.value;
    const subscriptions = JSON.parse(localStorage.getItem('subscriptions') || '[]');
    subscriptions.push({ email, topic });
    localStorage.setItem('subscriptions', JSON.stringify(subscriptions));
    document.getElementById('status').textContent = `Subscribed ${email} to ${topic}`;
    if (event.agentInvoked) event.respondWith(Promise.resolve(ok({ subscribed: email, topic })));
    // done: the form (and so its tool) makes way for a thank-you
    setTimeout(() => form.replaceWith(Object.assign(document.createElement('p'), { textContent: 'Thank you!' })), 0);
  });
})();
