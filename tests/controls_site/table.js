// A card table: read_board, begin_round (it does what Begin round does) and go_to_lobby (another page) from the
// start; Begin round (and begin_round) registers play_card and withdraws begin_round, Leave table withdraws
// read_board, Shuffle deck changes only the text (posts to /shuffles, shows a card back from the ?cards= host),
// the #/scores route registers read_scores.
const status = document.getElementById("status");
const board = new AbortController();
let round = null;

function register(tool, signal) {
  document.modelContext.registerTool(tool, { signal });
}

register(
  {
    name: "read_board",
    description: "Reads the cards on the table.",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true },
    execute: () => ({ cards: ["7 of hearts"] }),
  },
  board.signal,
);

const opening = new AbortController(); // begin_round's: a round once begun cannot be begun again
function beginRound() {
  if (round) return;
  opening.abort();
  round = new AbortController();
  register(
    {
      name: "play_card",
      description: "Plays a card from the hand.",
      inputSchema: { type: "object", properties: { card: { type: "string", enum: ["ace", "king"] } }, required: ["card"] },
      execute: ({ card }) => {
        status.textContent = `Played ${card}`;
        return { played: card };
      },
    },
    round.signal,
  );
  status.textContent = "Round started";
}
document.getElementById("begin").addEventListener("click", beginRound);

register({
  name: "begin_round",
  description: "Begins a round of cards, as the Begin round button does.",
  inputSchema: { type: "object", properties: {} },
  execute: () => {
    beginRound();
    return { started: true };
  },
}, opening.signal);

document.getElementById("leave").addEventListener("click", () => {
  board.abort();
  status.textContent = "You left the table";
});

document.getElementById("shuffle").addEventListener("click", () => {
  status.textContent = "Deck shuffled";
  fetch("/shuffles", { method: "POST" }).catch(() => {}); // a write: a click explored must never send it
  // the card backs come from the host ?cards= names (another origin), if any
  const cards = new URLSearchParams(location.search).get("cards");
  if (cards) {
    const back = document.createElement("img");
    back.src = `${cards}/back.png`;
    document.body.append(back);
  }
});

register({
  name: "go_to_lobby",
  description: "Leaves the table for the lobby (another page).",
  inputSchema: { type: "object", properties: {} },
  execute: () => {
    setTimeout(() => location.assign("lobby.html"), 0);
    return { going: "lobby" };
  },
});

let scores = null;
function onRoute() {
  if (location.hash === "#/scores" && !scores) {
    scores = new AbortController();
    register(
      {
        name: "read_scores",
        description: "Reads the scores of the round.",
        inputSchema: { type: "object", properties: {} },
        annotations: { readOnlyHint: true },
        execute: () => ({ scores: [3, 5] }),
      },
      scores.signal,
    );
  }
}
window.addEventListener("hashchange", onRoute);
onRoute();
