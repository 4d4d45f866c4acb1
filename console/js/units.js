// Units: the organization's tree of teams (every page of it, depth-first as the API lists it), the
// people of the unit picked, and, for admins, adding a unit and moving a user into one.

import * as api from "./api.js";
import { alert, field, form, h, loading, pagedList, replace, scrolling, select } from "./dom.js";
import { refresh } from "./router.js";

const ROOT = "root";

// A move between two pages makes the cursor stale (409 conflict): the tree is read again from its
// start, a few times at most, rather than shown half old, half new.
const ATTEMPTS = 3;

async function everyUnit(orgId) {
  for (let attempt = 1; ; attempt++) {
    const units = [];
    let cursor = null;
    try {
      do {
        const page = await api.listUnits(orgId, cursor);
        units.push(...page.items);
        cursor = page.next_cursor;
      } while (cursor);
      return units;
    } catch (error) {
      if (!cursor || error.code !== "conflict" || attempt === ATTEMPTS) throw error;
    }
  }
}

// While a move of units is under way the API lists no tree (409 move_in_progress, with Retry-After):
// the panel says so, and offers to try again, as for a 429 or a 503. A unit just added (`added`, the
// create's answer) is in the tree even when the list, read a moment after, does not have it yet.
export function unitsPanel(org, admin, added) {
  const section = h("section", { "aria-labelledby": "org-units" }, h("h2", { id: "org-units" }, "Units"));
  const read = () => {
    section.replaceChildren(section.firstChild, loading("the units"));
    everyUnit(org.org_id).then(
      (units) => {
        if (added && !units.some((unit) => unit.unit_id === added.unit_id)) units.push(added);
        section.replaceChildren(section.firstChild, ...panel(org, admin, units));
      },
      (error) =>
        replace(
          section,
          section.firstChild,
          alert(error.message),
          api.retryable(error) ? h("button", { type: "button", className: "secondary", onClick: read }, "Try again") : null,
        ),
    );
  };
  read();
  return section;
}

function panel(org, admin, units) {
  const people = h("div", {});
  const buttons = new Map();
  const pick = (unitId, name) => {
    for (const [id, button] of buttons) button.setAttribute("aria-pressed", String(id === unitId));
    people.replaceChildren(...members(org, unitId, name));
  };
  const item = (unitId, name, note) => {
    const button = h("button", { type: "button", className: "link", "aria-pressed": "false", onClick: () => pick(unitId, name) }, name);
    buttons.set(unitId, button);
    return h("li", {}, button, note ? h("span", { className: "muted" }, ` ${note}`) : null);
  };
  // Depth-first: each unit follows its parent, so a parent's list exists when its children come.
  const top = item(ROOT, org.name, "(the whole organization)");
  const lists = new Map([[ROOT, h("ul", {})]]);
  top.append(lists.get(ROOT));
  for (const unit of units) {
    const li = item(unit.unit_id, unit.name, unit.moving ? "(moving)" : null);
    const children = h("ul", {});
    li.append(children);
    lists.set(unit.unit_id, children);
    (lists.get(unit.parent_id) || lists.get(ROOT)).append(li);
  }
  for (const list of lists.values()) if (!list.children.length) list.remove();
  const parts = [h("ul", { className: "tree", "aria-label": "Units" }, top), people];
  if (!units.length) parts.splice(1, 0, h("p", { className: "muted" }, "No units yet."));
  if (admin) parts.push(...adminForms(org, units));
  return parts;
}

function members(org, unitId, name) {
  const rows = h("tbody", {});
  const table = h(
    "table",
    {},
    h("caption", {}, `People in ${name}`),
    h("thead", {}, h("tr", {}, ...["User", "Name", "Unit"].map((t) => h("th", { scope: "col" }, t)))),
    rows,
  );
  return [
    h("h3", {}, `People in ${name}`),
    scrolling(table),
    ...pagedList({
      container: rows,
      fetchPage: (cursor) => api.listUnitUsers(org.org_id, unitId, cursor),
      label: "people",
      empty: "No one in this unit or below it.",
      row: (user) => h("tr", {}, h("td", {}, user.user_id), h("td", {}, user.name), h("td", {}, user.unit)),
    }),
  ];
}

function adminForms(org, units) {
  const ids = [ROOT, ...units.map((unit) => unit.unit_id)];
  return [
    h("h3", {}, "Add a unit"),
    form(
      { "aria-label": "Add a unit" },
      [
        field("Unit id", h("input", { name: "unit_id", required: true, autocomplete: "off" })),
        field("Unit name", h("input", { name: "name", required: true, autocomplete: "off" })),
        field("Parent unit", select("parent_id", ids, ROOT)),
      ],
      "Add unit",
      async (data, _, key) => {
        const unit = await api.createUnit(org.org_id, Object.fromEntries(data), key);
        refresh(`Added unit ${unit.unit_id}.`, { unit });
      },
    ),
    h("h3", {}, "Move a user"),
    form(
      { "aria-label": "Move a user" },
      [
        field("User id", h("input", { name: "user_id", required: true, autocomplete: "off" })),
        field("To unit", select("unit", ids, ROOT)),
      ],
      "Move user",
      async (data) => {
        const user = await api.updateUser(org.org_id, data.get("user_id"), { unit: data.get("unit") });
        refresh(`Moved ${user.user_id} to ${user.unit}.`);
      },
    ),
  ];
}
