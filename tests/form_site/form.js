// The form checks its own fields: an agent's call with bad input gets the list of problems back
// (respondWith), a good one gets the booking; a person's submit shows the same on the page.
const form = document.getElementById("booking");
if (new URLSearchParams(location.search).has("toolautosubmit")) form.setAttribute("toolautosubmit", "");

function problems() {
  const out = [];
  if (form.elements.name.value.trim().length < 2) out.push({ field: "name", message: "a name of 2 characters or more" });
  if (!form.elements.day.value) out.push({ field: "day", message: "a day" });
  return out;
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const wrong = problems();
  if (wrong.length) {
    if (event.agentInvoked) event.respondWith(wrong);
    return;
  }
  const text = `Booked for ${form.elements.name.value} on ${form.elements.day.value}, party of ${form.elements.party.value}`;
  document.getElementById("booked").textContent = text;
  if (event.agentInvoked) event.respondWith(text);
});
