// Hotel Hash: each hash route registers its own tools, and every tool checks its input as a real site does:
// a hotel id it does not know, a day in the past or a malformed question is refused with a list of problems.
const HOTELS = {
  aurelian: { name: "Hotel Aurelian", city: "lisbon", rooms: 12 },
  borealis: { name: "Hotel Borealis", city: "porto", rooms: 4 },
};
const view = document.getElementById("view");
const status = document.getElementById("status");
let registered = [];

function register(tool) {
  const controller = new AbortController();
  document.modelContext.registerTool(tool, { signal: controller.signal });
  registered.push(controller);
}

function refuse(problems) {
  return { status: "invalid", problems };
}

function today() {
  return new Date().toISOString().slice(0, 10);
}

function listRoute() {
  view.textContent = "Pick a hotel.";
  register({
    name: "search_hotels",
    description: "Lists the hotels of a city.",
    inputSchema: {
      type: "object",
      properties: { city: { type: "string", enum: ["lisbon", "porto"], description: "The city" } },
      required: ["city"],
    },
    annotations: { readOnlyHint: true },
    execute: ({ city }) => {
      const found = Object.entries(HOTELS).filter(([, h]) => h.city === city);
      status.textContent = `Found ${found.length} hotel(s) in ${city}`;
      return { status: "ok", hotels: found.map(([id, h]) => ({ id, name: h.name })) };
    },
  });
  register({
    name: "get_hotel",
    description: "Shows one hotel by its id.",
    inputSchema: {
      type: "object",
      properties: { hotel_id: { type: "string", pattern: "^[a-z]+$", description: "The hotel's id" } },
      required: ["hotel_id"],
    },
    annotations: { readOnlyHint: true },
    execute: ({ hotel_id }) => {
      const hotel = HOTELS[hotel_id];
      if (!hotel) return refuse([{ field: "hotel_id", message: `no hotel ${hotel_id}` }]);
      status.textContent = `Showing ${hotel.name}`;
      return { status: "ok", hotel: { id: hotel_id, name: hotel.name, rooms: hotel.rooms } };
    },
  });
}

function hotelRoute(id) {
  const hotel = HOTELS[id];
  view.textContent = hotel ? hotel.name : "No such hotel";
  if (!hotel) return;
  register({
    name: "book_room",
    description: "Prepares a booking at this hotel; the guest confirms it with the Confirm booking button.",
    inputSchema: {
      type: "object",
      properties: {
        check_in: { type: "string", format: "date", description: "The first night" },
        nights: { type: "integer", minimum: 1, maximum: 14 },
      },
      required: ["check_in", "nights"],
    },
    execute: ({ check_in, nights }) => {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(check_in) || check_in < today()) {
        return refuse([{ field: "check_in", message: "a day from today on" }]);
      }
      view.innerHTML = "";
      const summary = document.createElement("p");
      summary.textContent = `Review: ${nights} night(s) at ${hotel.name} from ${check_in}`;
      const confirm = document.createElement("button");
      confirm.textContent = "Confirm booking";
      confirm.addEventListener("click", () => {
        localStorage.setItem("booking", JSON.stringify({ id, check_in, nights }));
        status.textContent = "Booked";
      });
      view.append(summary, confirm);
      return { status: "CONFIRMATION_REQUIRED", message: "Press Confirm booking to book." };
    },
  });
}

function route() {
  registered.forEach((c) => c.abort());
  registered = [];
  status.textContent = "";
  const match = location.hash.match(/^#\/hotel\/([^/]+)$/);
  if (match) hotelRoute(match[1]);
  else listRoute();
}

document.getElementById("start").addEventListener("click", () => {
  if (document.getElementById("concierge")) return;
  const panel = document.createElement("section");
  panel.id = "concierge";
  panel.textContent = "Concierge ready";
  document.body.append(panel);
  const controller = new AbortController();
  document.modelContext.registerTool(
    {
      name: "ask_concierge",
      description: "Answers a question about the hotels.",
      inputSchema: {
        type: "object",
        properties: { question: { type: "string", minLength: 5, maxLength: 200 } },
        required: ["question"],
      },
      annotations: { readOnlyHint: true },
      execute: ({ question }) => {
        if (!/[a-z]{3}/i.test(question)) return refuse([{ field: "question", message: "ask in words" }]);
        panel.textContent = "Concierge: every hotel has breakfast";
        return { status: "ok", answer: "Every hotel has breakfast." };
      },
    },
    { signal: controller.signal },
  );
});

window.addEventListener("hashchange", route);
route();
