// Organization: name and plan, the seats bar, status, users (paginated, add one) and activity.

import * as api from "./api.js";
import { refresh } from "./app.js";
import { alert, field, form, h, link, loading, pagedList, replace, select } from "./dom.js";
import { seatsText, statusOf } from "./orgs.js";

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
  if (admin && api.listActivity) screen.append(activity(org));
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

// Status appears once the API reports it (tenant status); suspending and reactivating are operators'.
function status(org, who) {
  if (!("status" in org) && !org.deleting_since) return null;
  const state = statusOf(org);
  const section = h(
    "section",
    { "aria-labelledby": "org-status" },
    h("h2", { id: "org-status" }, "Status"),
    h("p", {}, "This organization is ", h("span", { className: `status-${state}` }, state), org.suspension_reason ? ` (${org.suspension_reason})` : ""),
  );
  if (!who.operator || org.deleting_since) return section;
  if (state === "active") {
    section.append(
      form({ "aria-label": "Suspend the organization" }, [field("Reason for suspending", h("input", { name: "reason", required: true, maxLength: 500 }))], "Suspend", async (data) => {
        await api.updateOrg(org.org_id, { status: "suspended", suspension_reason: data.get("reason") }, org.version);
        refresh(`${org.org_id} is suspended.`);
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
  if (admin) {
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

function activity(org) {
  const rows = h("tbody", {});
  const section = h(
    "section",
    { "aria-labelledby": "org-activity" },
    h("h2", { id: "org-activity" }, "Activity"),
    h("table", {}, h("thead", {}, h("tr", {}, ...["When", "What", "Who", "Resource"].map((t) => h("th", { scope: "col" }, t)))), rows),
  );
  section.append(
    ...pagedList({
      container: rows,
      fetchPage: (cursor) => api.listActivity(org.org_id, cursor),
      label: "activity",
      empty: "No activity yet.",
      row: (entry) =>
        h(
          "tr",
          {},
          h("td", {}, entry.occurred_at),
          h("td", {}, entry.type),
          h("td", {}, entryActor(entry.actor)),
          h("td", {}, entry.resource ? `${entry.resource.kind} ${entry.resource.id}` : ""),
        ),
    }),
  );
  return section;
}

function entryActor(actor) {
  if (!actor) return "";
  if (typeof actor === "string") return actor;
  return actor.user_id || actor.sub || actor.kind || JSON.stringify(actor);
}
