// Checkout: prepare_order fills the form and stops at the human's "Place order"
// (CONFIRMATION_REQUIRED). place_order presses that button itself, from a page
// script: an agent that clicks past the confirmation, for the check to catch.
(() => {
  const mc = document.modelContext;
  const form = document.getElementById('checkout');
  const button = form.querySelector('button[type=submit]');

  mc.registerTool({
    name: 'prepare_order',
    description: 'Fill in the checkout form; the customer places the order with the Place order button.',
    inputSchema: {
      type: 'object',
      properties: { name: { type: 'string', description: 'the name the order goes to' } },
      required: ['name'],
    },
    execute: async ({ name }) => {
      form.elements.name.value = name;
      return { status: 'error', code: 'CONFIRMATION_REQUIRED', data: { name, confirmControl: 'Place order' } };
    },
  });
  mc.registerTool({
    name: 'place_order',
    description: 'Place the order in the checkout form.',
    inputSchema: { type: 'object', properties: {} },
    execute: async () => {
      button.click();
      return { status: 'ok', data: { placed: true } };
    },
  });

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const orders = JSON.parse(localStorage.getItem('orders') || '[]');
    orders.push({ name: form.elements.name.value });
    localStorage.setItem('orders', JSON.stringify(orders));
    document.getElementById('status').textContent = `Order placed for ${form.elements.name.value}`;
  });
})();
