// User: the profile (editable within the caller's rights), their tickets newest first, opening one.

import * as api from "./api.js";
import { alert, field, form, h, link, loading, pagedList, select } from "./dom.js";
import { go, refresh, takeAnswer } from "./router.js";

const PRIORITIES = ["low", "normal", "high", "urgent"];

export async function userScreen(screen, who, orgId, userId) {
  const heading = h("h1", {}, `User ${userId}`);
  screen.append(heading, loading("the user"));
  // A save just made answered the user as they are now; a ticket just deleted may still be listed.
  // Only this user's: a save answered after the page was left for another user's is not theirs.
  const answer = takeAnswer();
  let user = answer.user?.org_id === orgId && answer.user.user_id === userId ? answer.user : undefined;
  try {
    user = user || (await api.getUser(orgId, userId));
  } catch (error) {
    screen.replaceChildren(heading, alert(error.message));
    return;
  }
  heading.textContent = `${user.name} (${user.user_id})`;
  screen.replaceChildren(heading, profile(user, who), tickets(user, answer.deletedTicket));
}

function profile(user, who) {
  // Users may edit their own name and e-mail; the role is for admins and operators.
  const mayChangeRole = who.operator || who.role === "admin";
  const fields = [
    field("Full name", h("input", { name: "name", value: user.name, required: true })),
    // Not type=email: the browser's idea of an address is narrower than the API's (josé@x.io), and it
    // would refuse the form for an address stored already, whichever field was changed. The API checks it.
    field("E-mail", h("input", { name: "email", inputMode: "email", autocomplete: "email", value: user.email, required: true })),
    mayChangeRole ? field("Role", select("role", ["member", "admin"], user.role)) : null,
  ].filter(Boolean);
  return h(
    "section",
    { "aria-labelledby": "user-profile" },
    h("h2", { id: "user-profile" }, "Profile"),
    h("p", { className: "muted" }, `Member of `, link(`#/orgs/${encodeURIComponent(user.org_id)}`, user.org_id), mayChangeRole ? "" : ` · role ${user.role}`),
    form({ "aria-label": "Profile" }, fields, "Save profile", async (data) => {
      const changes = Object.fromEntries([...data].filter(([name, value]) => user[name] !== value));
      if (!Object.keys(changes).length) throw new Error("Nothing to save: no field changed.");
      refresh("Profile saved.", { user: await api.updateUser(user.org_id, user.user_id, changes, user.version) });
    }),
  );
}

function tickets(user, deletedTicket) {
  const list = h("ul", { "aria-label": "Tickets" });
  const section = h("section", { "aria-labelledby": "user-tickets" }, h("h2", { id: "user-tickets" }, "Tickets, newest first"), list);
  section.append(
    ...pagedList({
      container: list,
      fetchPage: async (cursor) => {
        const page = await api.listTickets(user.org_id, user.user_id, cursor);
        return { ...page, items: page.items.filter((ticket) => ticket.ticket_id !== deletedTicket) };
      },
      label: "tickets",
      empty: "No tickets yet.",
      row: (ticket) =>
        h(
          "li",
          {},
          link(`#/orgs/${encodeURIComponent(ticket.org_id)}/tickets/${encodeURIComponent(ticket.ticket_id)}`, ticket.subject),
          h("span", { className: "muted" }, ` · ${ticket.status} · ${ticket.priority} · ${ticket.created_at.slice(0, 16).replace("T", " ")}`),
        ),
    }),
    h("h3", {}, "Open a ticket"),
    form(
      { className: "stack", "aria-label": "Open a ticket" },
      [
        field("Subject", h("input", { name: "subject", required: true })),
        field("Description", h("textarea", { name: "description" })),
        field("Priority", select("priority", PRIORITIES, "normal")),
      ],
      "Open ticket",
      async (data, _, key) => {
        const ticket = await api.openTicket(user.org_id, user.user_id, Object.fromEntries(data), key);
        go(`#/orgs/${encodeURIComponent(ticket.org_id)}/tickets/${encodeURIComponent(ticket.ticket_id)}`, "Ticket opened.", { ticket });
      },
    ),
  );
  return section;
}
