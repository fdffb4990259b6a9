// A bistro's booking page, as a restaurant demo writes it: its tools refuse a date
// that is not a date (YYYY-MM-DD). book_table says so in its schema (format: date);
// hold_table does not: only its answer tells.
(() => {
  const mc = document.modelContext;
  const isDate = (value) => typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value);
  function booking(name, dateSchema) {
    return {
      name,
      description: `${name === 'book_table' ? 'Book' : 'Hold'} a table for a date.`,
      inputSchema: {
        type: 'object',
        properties: { date: dateSchema, guests: { type: 'integer', minimum: 1, maximum: 12 } },
        required: ['date'],
      },
      execute: async ({ date, guests }) => {
        if (!isDate(date)) throw new Error(`Invalid value "${date}" for parameter date`);
        document.getElementById('status').textContent = `${name}: ${date} for ${guests || 2}`;
        return { status: 'ok', data: { date, guests: guests || 2 } };
      },
    };
  }
  mc.registerTool(booking('book_table', { type: 'string', format: 'date', description: 'YYYY-MM-DD' }));
  mc.registerTool(booking('hold_table', { type: 'string', description: 'the day' }));
})();
