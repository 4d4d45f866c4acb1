// Organization: name and plan, the seats bar, status, users (paginated, add one), its units
// (units.js) and activity (activity.js).

import { activityPanel } from "./activity.js";
import * as api from "./api.js";
import { alert, confirm, field, form, h, link, loading, pagedList, replace, scrolling, select, when } from "./dom.js";
import { seatsText, statusOf } from "./orgs.js";
import { refresh, takeAnswer } from "./router.js";
import { unitsPanel } from "./units.js";

const ROLES = ["member", "admin"];
const REASON_MAX = 500; // the API's suspension_reason, in code points
// What a suspension does, and how soon: the gateway's bound (docs/SECURITY.md).
const SUSPENSION_EFFECT =
  "Its admins and members are refused by the console and the API within 5 seconds, tokens already issued included. " +
  "Nothing is deleted: reactivating lets them back in, also within 5 seconds.";

export async function orgScreen(screen, who, orgId) {
  const heading = h("h1", {}, `Organization ${orgId}`);
  screen.append(heading, loading("the organization"));
  // A change just made answered the org as it is now: a GET could still read it as it was. Only this
  // org's: a change answered after the page was left for another org's is that other org's.
  const answer = takeAnswer();
  let org = answer.org?.org_id === orgId ? answer.org : undefined;
  const added = answer.unit?.org_id === orgId ? answer.unit : undefined;
  try {
    org = org || (await api.getOrg(orgId));
  } catch (error) {
    screen.replaceChildren(heading, alert(error.message));
    return;
  }
  const admin = who.operator || who.role === "admin";
  replace(screen, heading, summary(org, who), seats(org), status(org, who), users(org, who, admin), unitsPanel(org, admin, added));
  if (admin) screen.append(activityPanel(org, who));
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
          refresh("Renamed.", { org: await api.updateOrg(org.org_id, { name: data.get("name") }, org.version) });
        },
      ),
    );
  }
  if (who.operator) {
    // Only operators change plans (the API refuses admins); a plan with too few seats is the API's 409.
    const plans = h("select", { name: "plan" });
    const change = form({ "aria-label": "Change the plan" }, [field("Plan", plans)], "Change plan", async (data) => {
      refresh(`The plan is now ${data.get("plan")}.`, { org: await api.updateOrg(org.org_id, { plan: data.get("plan") }) });
    });
    api.listPlans().then(
      ({ items }) => {
        plans.replaceChildren(
          ...items.map((p) => h("option", { value: p.plan, selected: p.plan === org.plan }, `${p.plan} (${p.limits.users} seats)`)),
        );
      },
      // The plans could not be read (a 429, the network): the form says so instead of an empty choice,
      // and offers no button that would send no plan.
      (error) => {
        plans.closest("label").replaceWith(alert(`The plans could not be read: ${error.message}`));
        change.querySelector("button[type=submit]").remove();
      },
    );
    section.append(change);
  }
  return section;
}

// An org stored before seats were counted has no count (usage.users null) until the migration counts
// them: no bar, which would show none used, but what is known.
function seats(org) {
  const used = org.usage.users;
  const facts =
    used === null
      ? [h("span", {}, `Seats used: not counted yet. The plan allows ${org.limits.users}.`)]
      : [
          h("meter", { min: 0, max: org.limits.users, value: used, high: org.limits.users * 0.8, "aria-label": "Seats used" }),
          h("span", {}, `${seatsText(org)} seats used`),
        ];
  return h("section", { "aria-labelledby": "org-seats" }, h("h2", { id: "org-seats" }, "Seats"), h("div", { className: "seats" }, ...facts));
}

// Status: every caller sees it; the reason is the API's to show (operators only), and suspending and
// reactivating are operators'. Suspending asks for the reason the API requires (1 to 500 characters),
// then for a confirmation that says what it does.
function status(org, who) {
  const state = statusOf(org);
  const facts = [h("dt", {}, "Status"), h("dd", {}, h("span", { className: `status-${state}` }, state))];
  if (org.suspended_at) facts.push(h("dt", {}, "Suspended since"), h("dd", {}, when(org.suspended_at)));
  if (org.suspension_reason) facts.push(h("dt", {}, "Reason"), h("dd", {}, org.suspension_reason));
  const section = h("section", { "aria-labelledby": "org-status" }, h("h2", { id: "org-status" }, "Status"), h("dl", {}, ...facts));
  if (!who.operator || org.deleting_since) return section;
  if (state === "active") {
    // Up to 500 characters as the API counts them: code points, after trimming. Not maxLength, which
    // counts UTF-16 units, and so refused a reason of 500 emoji (1,000 units) that the API takes.
    // Trimmed as the API trims (pydantic: Unicode's White_Space), not as trim() does (which also
    // takes U+FEFF, and leaves U+0085).
    const reason = h("input", { name: "reason", required: true, size: 40, autocomplete: "off" });
    reason.addEventListener("input", () => {
      const length = [...reason.value.replace(/^\p{White_Space}+|\p{White_Space}+$/gu, "")].length;
      reason.setCustomValidity(length > REASON_MAX ? `The reason is ${length} characters long: ${REASON_MAX} at most.` : "");
    });
    section.append(
      h("p", { className: "muted" }, `Suspending: ${SUSPENSION_EFFECT}`),
      form({ "aria-label": "Suspend the organization" }, [field(`Reason for suspending (up to ${REASON_MAX} characters)`, reason)], "Suspend…", async (data) => {
        const confirmed = await confirm({
          title: `Suspend ${org.org_id}?`,
          text: [SUSPENSION_EFFECT, `Reason: ${data.get("reason")}`],
          confirmLabel: `Suspend ${org.org_id}`,
        });
        if (!confirmed) return;
        const changed = await api.updateOrg(org.org_id, { status: "suspended", suspension_reason: data.get("reason") }, org.version);
        refresh(`${org.org_id} is suspended: its users are refused within 5 seconds.`, { org: changed });
      }),
    );
  } else {
    section.append(
      form({ "aria-label": "Reactivate the organization" }, [], "Reactivate", async () => {
        const changed = await api.updateOrg(org.org_id, { status: "active" }, org.version);
        refresh(`${org.org_id} is active again. Its users are let back in within 5 seconds.`, { org: changed });
      }),
    );
  }
  return section;
}

// Users just added come first, at once: the list is in id order, and a new user may be pages away.
// Kept only from an add to the screen it refreshes (and through the adds that follow at once): any
// other rendering lists everyone as the API has them now, so a user renamed or deleted since is never
// shown as they were. The pages leave them out, so none shows twice.
let added = { orgId: null, users: [], pending: false };

function users(org, who, admin) {
  if (added.orgId !== org.org_id || !added.pending) added = { orgId: org.org_id, users: [], pending: false };
  added.pending = false;
  const fresh = added.users;
  const rows = h("tbody", {});
  const section = h(
    "section",
    { "aria-labelledby": "org-users" },
    h("h2", { id: "org-users" }, "Users"),
    scrolling(h("table", {}, h("thead", {}, h("tr", {}, ...["User", "Name", "E-mail", "Role"].map((t) => h("th", { scope: "col" }, t)))), rows)),
  );
  // Members may list their colleagues but open only their own page: no link the API would refuse.
  const userCell = (user) =>
    admin || user.user_id === who.userId
      ? link(`#/orgs/${encodeURIComponent(org.org_id)}/users/${encodeURIComponent(user.user_id)}`, user.user_id)
      : user.user_id;
  const row = (user, note) =>
    h("tr", {}, h("td", {}, userCell(user), note), h("td", {}, user.name), h("td", {}, user.email), h("td", {}, user.role));
  rows.append(...fresh.map((user) => row(user, h("span", { className: "muted" }, " new"))));
  const shown = new Set(fresh.map((user) => user.user_id));
  section.append(
    ...pagedList({
      container: rows,
      fetchPage: async (cursor) => {
        const page = await api.listUsers(org.org_id, cursor);
        return { ...page, items: page.items.filter((user) => !shown.has(user.user_id)) };
      },
      label: "users",
      empty: "No users yet.",
      row: (user) => row(user, null),
    }),
  );
  if (admin && org.deleting_since) {
    // Its delete has begun: no user can join it (the API's 404), so none is offered.
    section.append(h("p", { className: "muted" }, "This organization is being deleted: no user can be added."));
  } else if (admin && statusOf(org) === "suspended") {
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
          // Not type=email: the browser's idea of an address is narrower than the API's (josé@x.io), as in user.js.
          field("E-mail", h("input", { name: "email", inputMode: "email", required: true, autocomplete: "off" })),
          field("Role", select("role", ROLES, "member")),
        ],
        "Add user",
        async (data, _, key) => {
          const user = await api.createUser(org.org_id, Object.fromEntries(data), key);
          added.users.unshift(user);
          added.pending = true;
          refresh(`Added ${user.user_id}.`);
        },
      ),
    );
  }
  return section;
}
