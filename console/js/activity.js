// Activity (admins and operators: the API refuses members), newest first. The log is written from
// the table's stream seconds after a change, so while the panel is on screen its first page is read
// again every few seconds and new entries are put on top (one entry: event_id and type). More than a
// page of them since the last read: the pages after the first are read too, until one holds an entry
// already shown (up to CATCH_UP_PAGES), so that none is skipped.

import * as api from "./api.js";
import { alert, h, pagedList, scrolling, when } from "./dom.js";

const ACTIVITY_REFRESH_MS = 3000;
// Pages one refresh reads at most: 50 entries written in 3 seconds (an import) leave a gap, as a
// bound on the reads a busy org's panel makes each beat.
const CATCH_UP_PAGES = 5;

export function activityPanel(org, who) {
  const rows = h("tbody", {});
  const live = h("p", { className: "muted" }, "Newest first; new entries appear within seconds.");
  const section = h(
    "section",
    { "aria-labelledby": "org-activity" },
    h("h2", { id: "org-activity" }, "Activity"),
    live,
    scrolling(
      h(
        "table",
        { "aria-labelledby": "org-activity" },
        h("thead", {}, h("tr", {}, ...["When", "What", "Who", "Resource", "Changes"].map((t) => h("th", { scope: "col" }, t)))),
        rows,
      ),
    ),
  );
  const shown = new Set();
  const keyOf = (entry) => `${entry.event_id} ${entry.type}`;
  const unseen = (page) => {
    const items = page.items.filter((entry) => !shown.has(keyOf(entry)));
    items.forEach((entry) => shown.add(keyOf(entry)));
    return { ...page, items };
  };
  // The entries written since the last read, newest first: page after page while a whole page is
  // new. None is marked shown until every page is read, so a read refused halfway loses none.
  const newest = async () => {
    const fresh = [];
    let cursor = null;
    for (let read = 0; read < CATCH_UP_PAGES; read++) {
      const page = await api.listActivity(org.org_id, cursor);
      const items = page.items.filter((entry) => !shown.has(keyOf(entry)));
      fresh.push(...items);
      if (items.length < page.items.length || !page.next_cursor) break;
      cursor = page.next_cursor;
    }
    return unseen({ items: fresh }).items;
  };
  const row = (entry) =>
    h(
      "tr",
      {},
      h("td", {}, when(entry.occurred_at)),
      h("td", {}, entry.type),
      h("td", {}, actorOf(entry.actor, who)),
      h("td", {}, [entry.resource.kind, entry.resource.id, entry.resource.subject].filter(Boolean).join(" ")),
      h("td", {}, changesText(entry.changes)),
    );
  const [message, more] = pagedList({
    container: rows,
    fetchPage: async (cursor) => unseen(await api.listActivity(org.org_id, cursor)),
    label: "activity",
    empty: "No activity yet.",
    row,
  });
  section.append(message, more);
  const newer = async () => {
    if (!section.isConnected) return; // the screen changed: stop
    let wait = ACTIVITY_REFRESH_MS;
    if (!document.hidden) {
      try {
        const fresh = await newest();
        if (fresh.length) {
          rows.prepend(...fresh.map(row));
          if (!message.querySelector("[role=alert]")) message.replaceChildren();
        }
      } catch (error) {
        // The first load shows errors. A refresh refused for good stops, and says so: the entries
        // shown are no longer kept current (a 401 signs out; a 403 or 404: no longer allowed, or the
        // org is gone). One that may pass next time (429, 503, the network) is tried again at the
        // next beat (or after its Retry-After), so the panel stays live.
        if ([401, 403, 404].includes(error.status)) {
          // Not scrolled into view: the person is reading something else, and nothing they did failed.
          live.textContent = "Newest first; no longer updated.";
          message.replaceChildren(alert(`This log is no longer updated: ${error.message}`));
          return;
        }
        // A 429 (the web ACL's per-address rate, the org's rate or its daily quota) or a 503 says
        // when to come back: reading every beat until then would only be refused, and counted.
        if (Number.isInteger(error.retryAfter)) wait = Math.max(wait, error.retryAfter * 1000);
      }
    }
    setTimeout(newer, wait);
  };
  setTimeout(newer, ACTIVITY_REFRESH_MS);
  return section;
}

// The actor is the caller's `sub`; null when none is known: a user's, ticket's or unit's delete,
// whose stream record names only the item's last writer (docs/EVENTS.md). Not "the system": most
// such deletes are a person's (a member deleting their ticket), only a cascade's are the system's.
function actorOf(actor, who) {
  if (!actor) return "not recorded";
  return actor === who.sub ? `you (${actor})` : actor;
}

function valueText(value) {
  if (value === null || value === undefined || value === "") return "none";
  if (Array.isArray(value)) return value.length ? value.map(valueText).join(", ") : "none";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

// {plan: {old: "free", new: "pro"}} as "plan: free → pro"; one line per field.
function changesText(changes) {
  if (!changes) return "";
  return h(
    "ul",
    { className: "changes" },
    ...Object.entries(changes).map(([name, change]) => h("li", {}, `${name}: ${valueText(change.old)} → ${valueText(change.new)}`)),
  );
}
