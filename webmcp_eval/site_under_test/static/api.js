// The site's JSON API, as seen by the page and by its WebMCP tools.
// Every failure becomes an ApiFailure with a contract code; nothing from the
// transport (stack traces, proxy pages, status text) ever reaches a tool result.

export const UNAVAILABLE_MESSAGE = '活動服務暫時無法使用，請稍後再試。';
const TIMEOUT_MS = 3000;

const DEFAULT_MESSAGES = {
  INVALID_ARGUMENT: '輸入資料不正確。',
  SESSION_EXPIRED: '工作階段已過期，請重新開始。',
  FORBIDDEN: '請求遭到拒絕，請重新整理頁面後再試。',
  NOT_FOUND: '找不到指定的資料。',
  CONFLICT: '這個操作與目前的資料衝突。',
  TEMPORARILY_UNAVAILABLE: UNAVAILABLE_MESSAGE,
};

export class ApiFailure extends Error {
  constructor(code, message) {
    super(message || DEFAULT_MESSAGES[code] || UNAVAILABLE_MESSAGE);
    this.code = code;
    this.retryable = code === 'TEMPORARILY_UNAVAILABLE';
  }
}

export const session = { info: null, breaks: new Set() };
const expiryListeners = [];

export function onSessionExpired(listener) {
  expiryListeners.push(listener);
}

export async function loadSession() {
  session.info = await api('/api/session');
  session.breaks = new Set(session.info.breaks || []);
  if (session.info.expired) expiryListeners.forEach((fn) => fn());
  return session.info;
}

export async function restartSession() {
  session.info = await api('/api/session/restart', { method: 'POST', body: {} });
  session.breaks = new Set(session.info.breaks || []);
  return session.info;
}

function codeForStatus(status) {
  if (status === 401) return 'SESSION_EXPIRED';
  if (status === 403) return 'FORBIDDEN';
  if (status === 404) return 'NOT_FOUND';
  if (status === 409) return 'CONFLICT';
  if (status >= 500) return 'TEMPORARILY_UNAVAILABLE';
  return 'INVALID_ARGUMENT';
}

// Only our own server's short contract messages are shown; anything else gets
// the code's default text.
function safeMessage(status, payload) {
  const text = payload && payload.status === 'error' ? payload.message : null;
  if (status >= 500 || typeof text !== 'string' || text.length > 200) return undefined;
  return text;
}

export async function api(path, { method = 'GET', body, headers = {} } = {}) {
  const init = {
    method,
    credentials: 'same-origin',
    headers: { Accept: 'application/json', ...headers },
    signal: AbortSignal.timeout(TIMEOUT_MS),
  };
  if (method !== 'GET') {
    if (!session.info && path !== '/api/session') await loadSession();
    init.headers['Content-Type'] = 'application/json';
    init.headers['X-CSRF-Token'] = session.info ? session.info.csrfToken : '';
    init.body = JSON.stringify(body ?? {});
  }
  let response;
  let payload = null;
  try {
    response = await fetch(path, init);
    payload = await response.json();
  } catch {
    // Network error, timeout, or a body that is not our JSON (e.g. a proxy's error page).
    if (!response || response.ok || response.status >= 500) throw new ApiFailure('TEMPORARILY_UNAVAILABLE');
  }
  if (response.ok) return payload;
  const code = codeForStatus(response.status);
  if (code === 'SESSION_EXPIRED') expiryListeners.forEach((fn) => fn());
  throw new ApiFailure(code, safeMessage(response.status, payload));
}
