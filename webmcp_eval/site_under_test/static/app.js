// The demo events site: a small single-page app (no build step).
// Routes render with history.pushState (no cross-document navigation); each
// route owns an AbortController whose signal unregisters its WebMCP tools.
// Event text is untrusted: it is only ever inserted as text, never as HTML.

import { ApiFailure, api, loadSession, onSessionExpired, restartSession, session } from './api.js';
import {
  CITIES, EMAIL_PATTERN, LEVELS, PRICES, detailsPageTools, fetchEvent, registerAll,
  registerPageTools, registrationsPageTools, searchPageTools,
} from './tools.js';

const LABELS = {
  city: { taipei: '台北', taichung: '台中', kaohsiung: '高雄', online: '線上' },
  price: { free: '免費', paid: '付費' },
  level: { beginner: '入門', intermediate: '中階', advanced: '進階' },
};
const SITE_TITLE = 'WebMCP 活動站';
const main = () => document.getElementById('main');
let routeSeq = 0;
let current = null; // {controller, path}

// --- DOM helpers (text only) --------------------------------------------------------------
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function announce(text) {
  // Replacing the text node makes screen readers announce a repeated message too.
  document.getElementById('status').replaceChildren(document.createTextNode(text));
}

function formatDate(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat('zh-TW', {
    timeZone: 'Asia/Taipei', year: 'numeric', month: '2-digit', day: '2-digit',
    weekday: 'short', hour: '2-digit', minute: '2-digit', hour12: false,
  }).format(date);
}

function priceText(event) {
  if (event.price === 'free') return '免費';
  return event.priceTwd ? `NT$${event.priceTwd}` : '付費';
}

function mount(ctx, title, ...nodes) {
  if (!ctx.live()) return false;
  document.title = `${title} – ${SITE_TITLE}`;
  main().replaceChildren(...nodes);
  const heading = main().querySelector('h1');
  if (heading && ctx.focus) { heading.tabIndex = -1; heading.focus({ preventScroll: true }); }
  return true;
}

function problem(err) {
  return h('p', { class: 'problem', role: 'alert' }, err instanceof ApiFailure ? err.message : '發生錯誤，請稍後再試。');
}

function savedButton(saved, onClick) {
  return h('button', { type: 'button', class: 'save', 'aria-pressed': saved ? 'true' : 'false', onclick: onClick },
    saved ? '已收藏' : '收藏');
}

function markButtonSaved(button) {
  if (!button) return;
  button.textContent = '已收藏';
  button.setAttribute('aria-pressed', 'true');
}

async function humanSave(eventId, onSaved) {
  try {
    const result = await api('/api/saved', { method: 'POST', body: { eventId } });
    onSaved(result);
  } catch (err) {
    announce(err.message);
  }
}

// --- /events -------------------------------------------------------------------------------
function readSearchParams() {
  const params = new URLSearchParams(location.search);
  const filters = {};
  const query = (params.get('query') || '').trim();
  if (query) filters.query = query;
  for (const [key, allowed] of [['city', CITIES], ['price', PRICES], ['level', LEVELS]]) {
    if (allowed.includes(params.get(key))) filters[key] = params.get(key);
  }
  return filters;
}

function selectField(id, label, key, allowed, value) {
  const options = [h('option', { value: '' }, '不限'),
    ...allowed.map((v) => h('option', { value: v, selected: v === value }, LABELS[key][v]))];
  return h('div', { class: 'field' }, h('label', { for: id }, label), h('select', { id, name: key }, options));
}

async function searchView(ctx) {
  const filters = readSearchParams();
  const view = { saved: new Set(), cards: new Map() };
  const form = h('form', { class: 'search', role: 'search', 'aria-label': '搜尋活動' },
    h('div', { class: 'field' }, h('label', { for: 'f-query' }, '關鍵字'),
      h('input', { id: 'f-query', name: 'query', type: 'search', maxlength: 100, value: filters.query || '' })),
    selectField('f-city', '城市', 'city', CITIES, filters.city),
    selectField('f-price', '費用', 'price', PRICES, filters.price),
    selectField('f-level', '程度', 'level', LEVELS, filters.level),
    h('button', { type: 'submit' }, '搜尋'));
  const count = h('p', { id: 'result-count' });
  const list = h('ul', { class: 'cards', id: 'result-list', 'aria-labelledby': 'results-title' });
  const results = h('section', { 'aria-labelledby': 'results-title' },
    h('h2', { id: 'results-title' }, '搜尋結果'), count, list);
  if (!mount(ctx, '找活動', h('h1', {}, '找活動'), form, results)) return [];

  const card = (event) => {
    const titleId = `title-${event.id}`;
    const button = savedButton(view.saved.has(event.id), () => humanSave(event.id, (r) => view.markSaved(r.eventId, r.title)));
    view.cards.set(event.id, button);
    return h('li', {},
      h('article', { class: 'card', 'aria-labelledby': titleId, 'data-event-id': event.id },
        h('h3', { id: titleId }, h('a', { href: `/events/${encodeURIComponent(event.id)}`, 'data-link': true }, event.title)),
        h('p', { class: 'meta' }, `${formatDate(event.startsAt)}・${LABELS.city[event.city]}・${LABELS.price[event.price]}・${LABELS.level[event.level]}`),
        h('p', { class: 'seats' }, `剩餘名額 ${event.seatsLeft}`),
        button));
  };

  // Fill the visible form with the filters, run the search and render it.
  view.search = async (wanted) => {
    form.elements.query.value = wanted.query || '';
    for (const key of ['city', 'price', 'level']) form.elements[key].value = wanted[key] || '';
    const query = new URLSearchParams(wanted).toString();
    history.replaceState(history.state, '', `/events${query ? `?${query}` : ''}`);
    count.textContent = '搜尋中…';
    delete count.dataset.total; // the total of the results shown, once they are
    try {
      const { events } = await api(`/api/events${query ? `?${query}` : ''}`);
      if (!ctx.live()) return events;
      view.cards.clear();
      list.replaceChildren(...events.map(card));
      count.textContent = events.length ? `共 ${events.length} 場活動` : '找不到符合條件的活動。';
      count.dataset.total = String(events.length);
      return events;
    } catch (err) {
      if (ctx.live()) { list.replaceChildren(); count.textContent = err.message; }
      throw err;
    }
  };
  view.markSaved = (eventId, title) => {
    view.saved.add(eventId);
    markButtonSaved(view.cards.get(eventId));
    announce(`已收藏：${title}`);
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const wanted = {};
    for (const key of ['query', 'city', 'price', 'level']) {
      const value = form.elements[key].value.trim();
      if (value) wanted[key] = value;
    }
    view.search(wanted).catch(() => {});
  });

  // Both reads at once; the saved marks are applied once both have arrived.
  const [savedIds] = await Promise.all([
    api('/api/saved').then((r) => r.eventIds, () => []), // not fatal: the buttons just start as 收藏
    view.search(filters).catch(() => {}),
  ]);
  for (const id of savedIds) { view.saved.add(id); markButtonSaved(view.cards.get(id)); }
  return searchPageTools(view);
}

// --- /events/{id} ---------------------------------------------------------------------------
function eventFacts(event) {
  return h('dl', { class: 'facts' },
    h('dt', {}, '時間'), h('dd', {}, formatDate(event.startsAt)),
    h('dt', {}, '城市'), h('dd', {}, LABELS.city[event.city] || event.city),
    h('dt', {}, '地點'), h('dd', {}, event.venue),
    h('dt', {}, '費用'), h('dd', {}, priceText(event)),
    h('dt', {}, '程度'), h('dd', {}, LABELS.level[event.level] || event.level),
    h('dt', {}, '剩餘名額'), h('dd', { class: 'seats-left' }, `${event.seatsLeft} / ${event.capacity}`));
}

async function loadEvent(ctx, eventId) {
  try {
    return { event: await fetchEvent(eventId) };
  } catch (err) {
    const title = err.code === 'NOT_FOUND' ? '找不到這個活動' : '暫時無法顯示活動';
    mount(ctx, title, h('h1', {}, title), problem(err), h('p', {}, h('a', { href: '/events', 'data-link': true }, '回活動列表')));
    return { failure: err };
  }
}

async function detailsView(ctx, eventId) {
  const view = { eventId };
  const { event, failure } = await loadEvent(ctx, eventId);
  if (failure && failure.code === 'NOT_FOUND') return [];
  let button = null;
  view.markSaved = (title) => { markButtonSaved(button); announce(`已收藏：${title}`); };
  if (event) {
    button = savedButton(event.saved === true, () => humanSave(eventId, (r) => view.markSaved(r.title)));
    const registerLink = event.seatsLeft > 0
      ? h('a', { class: 'button', href: `/events/${encodeURIComponent(eventId)}/register`, 'data-link': true }, '我要報名')
      : h('p', {}, '已額滿');
    mount(ctx, event.title,
      h('p', {}, h('a', { href: '/events', 'data-link': true }, '← 回活動列表')),
      h('h1', {}, event.title),
      eventFacts(event),
      h('section', { 'aria-labelledby': 'summary-title' },
        h('h2', { id: 'summary-title' }, '活動介紹'),
        h('p', { class: 'summary', 'data-untrusted': 'true' }, event.summary)),
      h('div', { class: 'actions' }, button, registerLink));
  }
  return detailsPageTools(view);
}

// --- /events/{id}/register --------------------------------------------------------------------
async function registerView(ctx, eventId) {
  const view = { eventId, event: null, loadFailure: null, done: false, existing: null };
  const idempotencyKey = crypto.randomUUID(); // one per opened form: a double submit registers once
  let busy = false;

  const field = (id, label, type, autocomplete) => {
    const input = h('input', { id, name: id.slice(4), type, autocomplete, required: true, 'aria-describedby': `${id}-error` });
    const error = h('p', { id: `${id}-error`, class: 'field-error' });
    return { input, error, node: h('div', { class: 'field' }, h('label', { for: id }, label), input, error) };
  };
  const name = field('reg-name', '姓名', 'text', 'name');
  const email = field('reg-email', 'Email', 'email', 'email');
  const confirm = h('button', { type: 'submit', class: 'primary' }, '確認報名');
  const formError = h('p', { class: 'problem', role: 'alert' });
  const form = h('form', { class: 'register', novalidate: true, 'aria-labelledby': 'register-title' },
    name.node, email.node,
    h('p', { class: 'hint' }, '按下「確認報名」才會送出報名。'), formError, confirm);

  const showError = (f, text) => {
    f.error.textContent = text;
    if (text) f.input.setAttribute('aria-invalid', 'true'); else f.input.removeAttribute('aria-invalid');
  };
  const check = () => {
    const errors = [];
    const nameValue = name.input.value.trim();
    const emailValue = email.input.value.trim();
    showError(name, nameValue ? '' : '請填寫姓名。');
    if (!nameValue) errors.push('請填寫姓名。');
    const emailProblem = !emailValue ? '請填寫 Email。' : (EMAIL_PATTERN.test(emailValue) ? '' : 'Email 格式不正確。');
    showError(email, emailProblem);
    if (emailProblem) errors.push(emailProblem);
    return errors;
  };
  view.confirmButton = confirm;
  view.fill = (nameValue, emailValue) => {
    name.input.value = nameValue;
    email.input.value = emailValue;
    const errors = check();
    announce(errors.length ? errors.join(' ') : '報名表已填好，請檢查後按下「確認報名」。');
    return errors;
  };
  view.submit = async () => {
    if (busy || view.done) return; // a double click sends one request
    if (check().length) return;
    busy = true;
    confirm.disabled = true;
    formError.textContent = '';
    try {
      const result = await api('/api/registrations', {
        method: 'POST',
        headers: { 'Idempotency-Key': idempotencyKey },
        body: { eventId, name: name.input.value.trim(), email: email.input.value.trim() },
      });
      view.done = true;
      showSuccess(result);
    } catch (err) {
      formError.textContent = err.message;
      announce(err.message);
    } finally {
      busy = false;
      confirm.disabled = view.done;
    }
  };
  const showSuccess = (result) => {
    const success = h('section', { class: 'success', 'aria-labelledby': 'success-title' },
      h('h2', { id: 'success-title', tabindex: '-1' }, '報名成功'),
      h('p', {}, `報名編號：${result.registration.id}`),
      h('p', { class: 'seats-after' }, `剩餘名額：${result.seatsLeft}`),
      h('p', {}, h('a', { href: '/registrations', 'data-link': true }, '查看我的報名')));
    form.replaceWith(success);
    success.querySelector('h2').focus();
    announce(`報名成功：${result.registration.title}`);
  };
  form.addEventListener('submit', (e) => { e.preventDefault(); view.submit(); });

  // Load (or, after an outage, reload) the event and whether the user is already registered.
  view.load = async () => {
    const [{ event, failure }, registrations] = await Promise.all([
      loadEvent(ctx, eventId),
      // Not fatal when it fails: the server refuses a duplicate registration anyway.
      api('/api/registrations').then((r) => r.registrations, () => []),
    ]);
    view.event = event || null;
    view.loadFailure = failure || null;
    if (!event) return;
    view.existing = registrations.find((r) => r.eventId === eventId) || null;
    mount(ctx, `報名：${event.title}`,
      h('p', {}, h('a', { href: `/events/${encodeURIComponent(eventId)}`, 'data-link': true }, '← 回活動資訊')),
      h('h1', { id: 'register-title' }, `報名：${event.title}`),
      eventFacts(event),
      registerBody(view, form));
  };
  await view.load();
  if (view.loadFailure && view.loadFailure.code === 'NOT_FOUND') return [];
  return registerPageTools(view);
}

function registerBody(view, form) {
  if (view.existing) {
    return h('p', { class: 'problem' }, `你已經報名這個活動（報名編號 ${view.existing.id}）。`, ' ',
      h('a', { href: '/registrations', 'data-link': true }, '查看我的報名'));
  }
  if (view.event.seatsLeft <= 0) return h('p', { class: 'problem' }, '這個活動已經額滿。');
  return form;
}

// --- /registrations ---------------------------------------------------------------------------------
const dialog = () => document.getElementById('cancel-dialog');
let pendingCancel = null; // {registration, onDone}

function openCancelDialog(registration, onDone) {
  const d = dialog();
  pendingCancel = { registration, onDone, busy: false };
  d.querySelector('[data-field="title"]').textContent = registration.title;
  d.querySelector('[data-field="startsAt"]').textContent = formatDate(registration.startsAt);
  d.querySelector('[data-field="venue"]').textContent = registration.venue;
  d.querySelector('[data-field="id"]').textContent = registration.id;
  d.querySelector('#cancel-dialog-error').textContent = '';
  d.querySelector('#cancel-confirm').disabled = false;
  if (!d.open) d.showModal();
}

function closeCancelDialog() {
  pendingCancel = null;
  if (dialog().open) dialog().close();
}

async function confirmCancel() {
  const pending = pendingCancel;
  if (!pending || pending.busy) return; // a double click sends one request
  pending.busy = true;
  const button = dialog().querySelector('#cancel-confirm');
  button.disabled = true;
  try {
    const id = encodeURIComponent(pending.registration.id);
    const result = await api(`/api/registrations/${id}/cancel`, { method: 'POST', body: {} });
    if (pendingCancel === pending) closeCancelDialog();
    // A repeat (the first answer was lost and the person pressed again) says so: nothing was cancelled twice.
    const again = result.alreadyCancelled ? '先前已取消，沒有重複取消；' : '';
    announce(`已取消報名：${pending.registration.title}（${again}剩餘名額 ${result.seatsLeft}）`);
    await pending.onDone();
  } catch (err) {
    dialog().querySelector('#cancel-dialog-error').textContent = err.message;
    announce(err.message);
    pending.busy = false;
    button.disabled = false;
  }
}

async function registrationsView(ctx) {
  const view = { registrations: [], loadFailure: null };
  const list = h('ul', { class: 'cards', id: 'registration-list', 'aria-labelledby': 'registrations-title' });
  const note = h('p', { id: 'registration-count' });
  if (!mount(ctx, '我的報名', h('h1', { id: 'registrations-title' }, '我的報名'), note, list)) return [];

  const item = (r) => {
    const titleId = `reg-title-${r.id}`;
    return h('li', {},
      h('article', { class: 'card', 'aria-labelledby': titleId, 'data-registration-id': r.id },
        h('h2', { id: titleId }, h('a', { href: `/events/${encodeURIComponent(r.eventId)}`, 'data-link': true }, r.title)),
        h('p', { class: 'meta' }, `${formatDate(r.startsAt)}・${r.venue}`),
        h('p', {}, `報名編號 ${r.id}・狀態：報名中`),
        // The name starts with the visible text and says which one (several rows have this button).
        h('button', { type: 'button', class: 'danger', 'aria-label': `取消報名：${r.title}`, onclick: () => view.openCancel(r) }, '取消報名')));
  };
  view.refresh = async () => {
    try {
      const { registrations } = await api('/api/registrations');
      view.registrations = registrations;
      view.loadFailure = null;
      if (ctx.live()) {
        list.replaceChildren(...registrations.map(item));
        note.textContent = registrations.length ? `共 ${registrations.length} 筆報名` : '目前沒有報名。';
      }
      return registrations;
    } catch (err) {
      view.registrations = [];
      view.loadFailure = err;
      if (ctx.live()) { list.replaceChildren(); note.textContent = err.message; }
      throw err;
    }
  };
  view.openCancel = (r) => openCancelDialog(r, () => view.refresh().catch(() => {}));
  view.confirmCancel = () => confirmCancel();
  await view.refresh().catch(() => {});
  return registrationsPageTools(view);
}

// --- routing ---------------------------------------------------------------------------------------
const ROUTES = [
  [/^\/events$/, searchView],
  [/^\/events\/([^/]+)$/, detailsView],
  [/^\/events\/([^/]+)\/register$/, registerView],
  [/^\/registrations$/, registrationsView],
];

async function notFoundView(ctx) {
  mount(ctx, '找不到頁面', h('h1', {}, '找不到頁面'), h('p', {}, h('a', { href: '/events', 'data-link': true }, '回活動列表')));
  return [];
}

function matchRoute(path) {
  for (const [pattern, view] of ROUTES) {
    const match = pattern.exec(path);
    if (match) return [view, match.slice(1).map(decodeURIComponent)];
  }
  return [notFoundView, []];
}

let sessionLoaded = Promise.resolve();

async function route({ focus = true } = {}) {
  const seq = ++routeSeq;
  window.__siteReady = null;
  // Unregister the old route's tools before the new route exists (unless the
  // `leak_route_tools` break keeps them alive).
  if (current && !session.breaks.has('leak_route_tools')) current.controller.abort();
  const controller = new AbortController();
  const path = location.pathname;
  current = { controller, path };
  closeCancelDialog();
  const ctx = { path, focus, signal: controller.signal, live: () => seq === routeSeq };
  const [view, params] = matchRoute(path);
  let tools = [];
  try {
    tools = await view(ctx, ...params);
  } catch (err) {
    console.error('route failed', err);
    mount(ctx, '發生錯誤', h('h1', {}, '發生錯誤'), problem(err));
  }
  await sessionLoaded; // the tools read session.breaks
  if (!ctx.live()) return;
  await registerAll(tools, controller.signal);
  if (!ctx.live()) return;
  window.__siteReady = path;
  document.dispatchEvent(new CustomEvent('site:ready', { detail: { path } }));
}

export function navigate(href) {
  const url = new URL(href, location.href);
  if (url.pathname + url.search === location.pathname + location.search) return;
  history.pushState({}, '', url.pathname + url.search);
  route();
}

function onLinkClick(event) {
  const link = event.target.closest('a[data-link]');
  if (!link || event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(link.getAttribute('href'));
}

function showExpired() {
  const banner = document.getElementById('session-banner');
  if (!banner.hidden) return;
  const restart = h('button', { type: 'button', onclick: async () => {
    try {
      await restartSession();
      banner.hidden = true;
      announce('已重新開始。');
      route();
    } catch (err) {
      announce(err.message);
    }
  } }, '重新開始');
  banner.replaceChildren(h('span', {}, '工作階段已過期，目前無法報名、取消或收藏。'), ' ', restart);
  banner.hidden = false;
}

async function boot() {
  onSessionExpired(showExpired);
  document.addEventListener('click', onLinkClick);
  window.addEventListener('popstate', () => route());
  const d = dialog();
  d.querySelector('#cancel-confirm').addEventListener('click', () => confirmCancel());
  d.querySelector('#cancel-back').addEventListener('click', () => { closeCancelDialog(); announce('已返回，沒有取消報名。'); });
  d.addEventListener('close', () => { pendingCancel = null; });
  // The first route renders while the session loads; its tools wait for it.
  // If the API is down, pages show their own errors and writes retry the session.
  sessionLoaded = loadSession().catch(() => {});
  await route({ focus: false });
}

boot();
