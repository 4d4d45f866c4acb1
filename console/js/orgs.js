// Organizations (operators): the list with plan, status and seats (the plan's: the listing carries no
// seats used, which are on an item of their own; the org's page shows them), and creating one.

import * as api from "./api.js";
import { alert, field, form, h, link, pagedList, scrolling, select } from "./dom.js";
import { go } from "./router.js";

export function seatsText(org) {
  const used = org.usage.users === null ? "?" : org.usage.users;
  return `${used} of ${org.limits.users}`;
}

export function statusOf(org) {
  if (org.deleting_since) return "deleting";
  return org.status || "active";
}

// The list is the operators': the API gives them the reason, shown beside the status.
function statusCell(org) {
  const state = statusOf(org);
  const cell = [h("span", { className: `status-${state}` }, state)];
  if (org.suspension_reason) cell.push(h("span", { className: "muted" }, ` (${org.suspension_reason})`));
  return cell;
}

export async function orgsScreen(screen) {
  screen.append(h("h1", {}, "Organizations"));
  const rows = h("tbody", {});
  const table = h(
    "table",
    {},
    h("caption", { className: "muted" }, "Every organization, oldest first"),
    h("thead", {}, h("tr", {}, ...["Organization", "Name", "Plan", "Status", "Seats"].map((t) => h("th", { scope: "col" }, t)))),
    rows,
  );
  const list = h("section", { "aria-labelledby": "orgs-list" }, h("h2", { id: "orgs-list" }, "All organizations"), scrolling(table));
  list.append(
    ...pagedList({
      container: rows,
      fetchPage: api.listOrgs,
      label: "organizations",
      empty: "No organizations yet.",
      row: (org) =>
        h(
          "tr",
          {},
          h("td", {}, link(`#/orgs/${encodeURIComponent(org.org_id)}`, org.org_id)),
          h("td", {}, org.name),
          h("td", {}, org.plan),
          h("td", {}, statusCell(org)),
          h("td", {}, String(org.limits.users)),
        ),
    }),
  );
  // The plans could not be read (a 429, the network): the form says so, and a new org gets the API's
  // default plan (no plan sent), rather than a choice of one that looks like the whole catalogue.
  const plans = await api.listPlans().then(
    ({ items }) => field("Plan", select("plan", items.map((p) => p.plan), items[0] && items[0].plan)),
    (error) => alert(`The plans could not be read: ${error.message}. A new organization gets the default plan; change it on its page.`),
  );
  const create = form(
    { "aria-label": "Create an organization" },
    [
      field("Organization id", h("input", { name: "org_id", required: true, autocomplete: "off" })),
      field("Name", h("input", { name: "name", required: true, autocomplete: "off" })),
      plans,
    ],
    "Create organization",
    async (data, _, key) => {
      const plan = data.has("plan") ? data.get("plan") : undefined; // undefined: not sent
      const org = await api.createOrg({ org_id: data.get("org_id"), name: data.get("name"), plan }, key);
      go(`#/orgs/${encodeURIComponent(org.org_id)}`, `Created ${org.org_id}.`, { org });
    },
  );
  screen.append(h("section", { "aria-labelledby": "orgs-create" }, h("h2", { id: "orgs-create" }, "Create an organization"), create), list);
}
