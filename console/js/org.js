// Organization: name and plan, the seats bar, status, users (paginated, add one) and activity.

import * as api from "./api.js";
import { alert, field, form, h, link, loading, pagedList, replace, select } from "./dom.js";
import { seatsText, statusOf } from "./orgs.js";
import { refresh } from "./router.js";

const ROLES = ["member", "admin"];

export async function orgScreen(screen, who, orgId) {
  const heading = h("h1", {}, `Organization ${orgId}`);
  screen.append(heading, loading("the organization"));
  let org;
  try {
    org = await api.getOrg(orgId);
  } catch (error) {
    screen.replaceChildren(heading, alert(error.message));
    return;
  }
  const admin = who.operator || who.role === "admin";
  replace(screen, heading, summary(org, who), seats(org), status(org, who), users(org, who, admin));
  if (admin) screen.append(activity(org, who));
}

function summary(org, who) {
  const section = h(
    "section",
    { "aria-labelledby": "org-summary" },
    h("h2", { id: "org-summary" }, org.name),
    h("dl", {}, h("dt", {}, "Organization id"), h("dd", {}, org.org_id), h("dt", {}, "Plan"), h("dd", {}, org.plan)),
  );
  if (who.operator || who.role === "admin") {
    section.append(
      form(
        { "aria-label": "Rename the organization" },
        [field("Organization name", h("input", { name: "name", value: org.name, required: true }))],
        "Rename",
        async (data) => {
          await api.updateOrg(org.org_id, { name: data.get("name") }, org.version);
          refresh("Renamed.");
        },
      ),
    );
  }
  if (who.operator) {
    // Only operators change plans (the API refuses admins); a plan with too few seats is the API's 409.
    const plans = h("select", { name: "plan" });
    api.listPlans().then(({ items }) => {
      plans.replaceChildren(
        ...items.map((p) => h("option", { value: p.plan, selected: p.plan === org.plan }, `${p.plan} (${p.limits.users} seats)`)),
      );
    });
    section.append(
      form({ "aria-label": "Change the plan" }, [field("Plan", plans)], "Change plan", async (data) => {
        await api.updateOrg(org.org_id, { plan: data.get("plan") });
        refresh(`The plan is now ${data.get("plan")}.`);
      }),
    );
  }
  return section;
}

function seats(org) {
  const used = org.usage.users ?? 0;
  return h(
    "section",
    { "aria-labelledby": "org-seats" },
    h("h2", { id: "org-seats" }, "Seats"),
    h(
      "div",
      { className: "seats" },
      h("meter", { min: 0, max: org.limits.users, value: used, high: org.limits.users * 0.8, "aria-label": "Seats used" }),
      h("span", {}, `${seatsText(org)} seats used`),
    ),
  );
}

// Status: every caller sees it; the reason is the API's to show (operators only), and suspending and
// reactivating are operators'. Suspending asks for the reason the API requires (1 to 500 characters).
function status(org, who) {
  const state = statusOf(org);
  const facts = [h("dt", {}, "Status"), h("dd", {}, h("span", { className: `status-${state}` }, state))];
  if (org.suspended_at) facts.push(h("dt", {}, "Suspended since"), h("dd", {}, when(org.suspended_at)));
  if (org.suspension_reason) facts.push(h("dt", {}, "Reason"), h("dd", {}, org.suspension_reason));
  const section = h("section", { "aria-labelledby": "org-status" }, h("h2", { id: "org-status" }, "Status"), h("dl", {}, ...facts));
  if (!who.operator || org.deleting_since) return section;
  if (state === "active") {
    const reason = h("input", { name: "reason", required: true, maxLength: 500, size: 40, autocomplete: "off" });
    section.append(
      form({ "aria-label": "Suspend the organization" }, [field("Reason for suspending (up to 500 characters)", reason)], "Suspend", async (data) => {
        await api.updateOrg(org.org_id, { status: "suspended", suspension_reason: data.get("reason") }, org.version);
        refresh(`${org.org_id} is suspended: its users cannot sign in or call the API.`);
      }),
    );
  } else {
    section.append(
      form({ "aria-label": "Reactivate the organization" }, [], "Reactivate", async () => {
        await api.updateOrg(org.org_id, { status: "active" }, org.version);
        refresh(`${org.org_id} is active again.`);
      }),
    );
  }
  return section;
}

function users(org, who, admin) {
  const rows = h("tbody", {});
  const section = h(
    "section",
    { "aria-labelledby": "org-users" },
    h("h2", { id: "org-users" }, "Users"),
    h("table", {}, h("thead", {}, h("tr", {}, ...["User", "Name", "E-mail", "Role"].map((t) => h("th", { scope: "col" }, t)))), rows),
  );
  // Members may list their colleagues but open only their own page: no link the API would refuse.
  const userCell = (user) =>
    admin || user.user_id === who.userId
      ? link(`#/orgs/${encodeURIComponent(org.org_id)}/users/${encodeURIComponent(user.user_id)}`, user.user_id)
      : user.user_id;
  section.append(
    ...pagedList({
      container: rows,
      fetchPage: (cursor) => api.listUsers(org.org_id, cursor),
      label: "users",
      empty: "No users yet.",
      row: (user) => h("tr", {}, h("td", {}, userCell(user)), h("td", {}, user.name), h("td", {}, user.email), h("td", {}, user.role)),
    }),
  );
  if (admin && statusOf(org) === "suspended") {
    // The API refuses new users in a suspended org (409 org_suspended): say so instead of offering it.
    section.append(h("p", { className: "muted" }, "Reactivate the organization to add users."));
  } else if (admin) {
    section.append(
      h("h3", {}, "Add a user"),
      form(
        { "aria-label": "Add a user" },
        [
          field("User id", h("input", { name: "user_id", required: true, autocomplete: "off" })),
          field("Full name", h("input", { name: "name", required: true, autocomplete: "off" })),
          field("E-mail", h("input", { name: "email", type: "email", required: true, autocomplete: "off" })),
          field("Role", select("role", ROLES, "member")),
        ],
        "Add user",
        async (data) => {
          const user = await api.createUser(org.org_id, Object.fromEntries(data));
          refresh(`Added ${user.user_id}.`);
        },
      ),
    );
  }
  return section;
}

// Activity (admins and operators: the API refuses members), newest first. The log is written from
// the table's stream seconds after a change, so while the panel is on screen its first page is read
// again every few seconds and new entries are put on top (one entry: event_id and type).
const ACTIVITY_REFRESH_MS = 3000;

function activity(org, who) {
  const rows = h("tbody", {});
  const section = h(
    "section",
    { "aria-labelledby": "org-activity" },
    h("h2", { id: "org-activity" }, "Activity"),
    h("p", { className: "muted" }, "Newest first; new entries appear within seconds."),
    h(
      "table",
      { "aria-labelledby": "org-activity" },
      h("thead", {}, h("tr", {}, ...["When", "What", "Who", "Resource", "Changes"].map((t) => h("th", { scope: "col" }, t)))),
      rows,
    ),
  );
  const shown = new Set();
  const unseen = (page) => {
    const items = page.items.filter((entry) => !shown.has(`${entry.event_id} ${entry.type}`));
    items.forEach((entry) => shown.add(`${entry.event_id} ${entry.type}`));
    return { ...page, items };
  };
  const row = (entry) =>
    h(
      "tr",
      {},
      h("td", {}, when(entry.occurred_at)),
      h("td", {}, entry.type),
      h("td", {}, actorOf(entry.actor, who)),
      h("td", {}, `${entry.resource.kind} ${entry.resource.id}`),
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
    if (!document.hidden) {
      try {
        const fresh = unseen(await api.listActivity(org.org_id)).items;
        if (fresh.length) {
          rows.prepend(...fresh.map(row));
          if (!message.querySelector("[role=alert]")) message.replaceChildren();
        }
      } catch {
        return; // the first load shows errors; a failing refresh stops quietly (a 401 signs out)
      }
    }
    setTimeout(newer, ACTIVITY_REFRESH_MS);
  };
  setTimeout(newer, ACTIVITY_REFRESH_MS);
  return section;
}

// RFC 3339 UTC as "2026-11-21 23:41:48 UTC": the same for every reader of the page.
function when(timestamp) {
  return h("time", { dateTime: timestamp }, `${timestamp.slice(0, 19).replace("T", " ")} UTC`);
}

// The actor is the caller's `sub`; null when none is known (a cascade's removals).
function actorOf(actor, who) {
  if (!actor) return "the system";
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
