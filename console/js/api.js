// The console's one door to the API. Every call is call(METHOD, `path`) with a literal method and
// path template; tests/browser/test_console_operations.py checks each against docs/openapi.json.

import { apiUrl, caller } from "./auth.js";

export class ApiError extends Error {
  constructor(status, error, retryAfter = null) {
    const problems = Array.isArray(error.details)
      ? error.details.map((p) => `${p.loc.filter((l) => l !== "body").join(".")}: ${p.message}`).join("; ")
      : "";
    super(whenToRetry(problems ? `${error.message}: ${problems}` : error.message, status, error.code, retryAfter));
    this.status = status;
    this.code = error.code;
    this.details = error.details;
    this.retryAfter = retryAfter;
  }
}

// Whether the same call may pass later, unchanged: the network, a limit (429), a service out (5xx), a
// move of units under way. A screen offers "Try again" for these only.
export function retryable(error) {
  return error.status === 0 || error.status === 429 || error.status >= 500 || error.code === "move_in_progress";
}

function seconds(n) {
  return n === 1 ? "1 second" : `${n} seconds`;
}

// The API's messages name its Retry-After header ("retry after Retry-After seconds"), which a person
// never sees: the console, which reads the header, says the number instead. A 503 or a move under way
// gets it added ("Try again in 5 seconds."); a 429 of the daily quota says itself when it resets.
function whenToRetry(message, status, code, retryAfter) {
  if (retryAfter === null) return message;
  if (message.includes("Retry-After seconds")) return message.replace("Retry-After seconds", seconds(retryAfter));
  if (status === 503 || code === "move_in_progress") return `${message.replace(/\.$/, "")}. Try again in ${seconds(retryAfter)}.`;
  return message;
}

// Retry-After in seconds (the API sends no date), or null when absent or not a number.
function retryAfterOf(answer) {
  const value = answer.headers.get("Retry-After");
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value) : null;
}

// The session is over: a 401 (the token expired or is not valid) or the gateway's 403 session_ended
// (the caller's user or organization was deleted), never a plain 403 forbidden (one route the
// caller's role may not call). app.js listens and returns to sign-in, once per token: the event
// names the token the refused call sent.
// 403 org_suspended from the gateway: the caller's org is suspended. app.js shows that page, for
// the token the refused call sent only.
export const signedOut = new EventTarget();
export const suspended = new EventTarget();

// A path segment, percent-encoded. Browsers resolve "." and ".." in a URL's path even encoded
// (%2E), so a typed user id ".." would call `/orgs/acme`, not `/orgs/acme/users/..`. No id is
// either, so neither leaves the console.
function seg(id) {
  if (id === "." || id === "..") throw new ApiError(422, { code: "validation_error", message: `"${id}" is not an id` });
  return encodeURIComponent(id);
}

const NOT_REACHED = "The API cannot be reached. Check your connection and retry.";

// A create (it carries an Idempotency-Key) that went unanswered may have been made all the same:
// no answer at all (the browser cannot tell a request that never left from an answer lost on the
// way), or API Gateway's 504 (its 29 s timeout) or 502 (Lambda ended the function at its 28 s). The
// form sends the same key while its content is unchanged, so the API replays the first answer:
// said, so that no one edits the form or reloads the page and makes it twice. An org, a unit or a
// ticket keeps its answer for the key in the write that makes it, so even a function ended just
// after it is replayed; a user whose function was ended after the write is "already exists"
// (docs/API.md#idempotent-creates), not a second user. A change or a delete has no key: sent again
// from the version the page showed, one already made is refused as if someone else had made it (a
// 412), so it says to reload and see first.
function maybeMade(error, method, key) {
  if (method === "GET" || ![0, 502, 504].includes(error.status)) return error;
  const said = error.status === 0 ? "No answer came from the API" : error.message.replace(/\.$/, "");
  const again =
    key === undefined
      ? "reload to see it before trying again"
      : "send it again unchanged, which does not make it twice";
  error.message = `${said}. It may have been made all the same: ${again}.`;
  return error;
}

async function call(method, path, { query, body, version, key } = {}) {
  const who = caller();
  const headers = { Accept: "application/json" };
  if (who) headers.Authorization = `Bearer ${who.token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (version !== undefined) headers["If-Match"] = `"${version}"`;
  if (key !== undefined) headers["Idempotency-Key"] = key;
  const search = new URLSearchParams(Object.entries(query || {}).filter(([, v]) => v !== null && v !== undefined));
  let answer;
  try {
    answer = await fetch(`${apiUrl()}${path}${search.size ? `?${search}` : ""}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw maybeMade(new ApiError(0, { code: "network", message: NOT_REACHED }), method, key);
  }
  if (answer.status === 204) return null;
  const data = await answer.json().catch(() => ({}));
  if (!answer.ok) {
    const error = maybeMade(
      new ApiError(answer.status, (data && data.error) || { code: "http", message: `The API answered ${answer.status}` }, retryAfterOf(answer)),
      method,
      key,
    );
    if (answer.status === 401 || (answer.status === 403 && error.code === "session_ended")) {
      signedOut.dispatchEvent(new CustomEvent("ended", { detail: { token: who ? who.token : null, error } }));
    }
    if (answer.status === 403 && error.code === "org_suspended") {
      suspended.dispatchEvent(new CustomEvent("suspended", { detail: { token: who ? who.token : null, error } }));
    }
    throw error;
  }
  return data;
}

const PAGE = 10;

export const listPlans = () => call("GET", `/plans`);
export const listOrgs = (cursor) => call("GET", `/orgs`, { query: { limit: PAGE, cursor } });
export const createOrg = (org, key) => call("POST", `/orgs`, { body: org, key });
export const getOrg = (org) => call("GET", `/orgs/${seg(org)}`);
export const updateOrg = (org, changes, version) => call("PATCH", `/orgs/${seg(org)}`, { body: changes, version });
export const listActivity = (org, cursor) => call("GET", `/orgs/${seg(org)}/activity`, { query: { limit: PAGE, cursor } });
export const listUsers = (org, cursor) => call("GET", `/orgs/${seg(org)}/users`, { query: { limit: PAGE, cursor } });
export const createUser = (org, user, key) => call("POST", `/orgs/${seg(org)}/users`, { body: user, key });
export const getUser = (org, user) => call("GET", `/orgs/${seg(org)}/users/${seg(user)}`);
export const updateUser = (org, user, changes, version) =>
  call("PATCH", `/orgs/${seg(org)}/users/${seg(user)}`, { body: changes, version });
export const listUnits = (org, cursor) => call("GET", `/orgs/${seg(org)}/units`, { query: { limit: 100, cursor } });
export const createUnit = (org, unit, key) => call("POST", `/orgs/${seg(org)}/units`, { body: unit, key });
export const listUnitUsers = (org, unit, cursor) =>
  call("GET", `/orgs/${seg(org)}/units/${seg(unit)}/users`, { query: { limit: PAGE, cursor } });
export const listTickets = (org, user, cursor) =>
  call("GET", `/orgs/${seg(org)}/users/${seg(user)}/tickets`, { query: { limit: PAGE, cursor } });
export const openTicket = (org, user, ticket, key) =>
  call("POST", `/orgs/${seg(org)}/users/${seg(user)}/tickets`, { body: ticket, key });
export const getTicket = (org, ticket) => call("GET", `/orgs/${seg(org)}/tickets/${seg(ticket)}`);
export const updateTicket = (org, ticket, changes, version) =>
  call("PATCH", `/orgs/${seg(org)}/tickets/${seg(ticket)}`, { body: changes, version });
export const deleteTicket = (org, ticket, version) => call("DELETE", `/orgs/${seg(org)}/tickets/${seg(ticket)}`, { version });
