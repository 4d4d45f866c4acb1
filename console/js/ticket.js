// Ticket: subject, description, status, priority and tags. Edits send If-Match; a 412 offers a reload.
// Deleting asks first.

import * as api from "./api.js";
import { alert, field, h, loading, select, showAlert } from "./dom.js";
import { go, refresh, takeAnswer } from "./router.js";

const STATUSES = ["open", "pending", "solved", "closed"];
const PRIORITIES = ["low", "normal", "high", "urgent"];

export async function ticketScreen(screen, who, orgId, ticketId) {
  const heading = h("h1", {}, "Ticket");
  screen.append(heading, loading("the ticket"));
  // A ticket just opened or saved is the write's answer: a GET could still read it as it was, or 404.
  // Only this ticket's: a save answered after the page was left for another ticket is not this one.
  const answered = takeAnswer().ticket;
  let ticket = answered?.org_id === orgId && answered.ticket_id === ticketId ? answered : undefined;
  try {
    ticket = ticket || (await api.getTicket(orgId, ticketId));
  } catch (error) {
    screen.replaceChildren(heading, alert(error.message));
    return;
  }
  heading.textContent = `Ticket: ${ticket.subject}`;
  const owner = `#/orgs/${encodeURIComponent(orgId)}/users/${encodeURIComponent(ticket.user_id)}`;
  screen.replaceChildren(
    heading,
    h("p", { className: "muted" }, "Opened by ", h("a", { href: owner }, ticket.user_id), ` on ${ticket.created_at.slice(0, 10)} · version ${ticket.version}`),
    editor(ticket),
    remover(ticket, owner),
  );
}

function editor(ticket) {
  const shownTags = ticket.tags.join(", ");
  const message = h("div", { "aria-live": "polite" });
  const save = h("button", { type: "submit" }, "Save ticket");
  const element = h(
    "form",
    { className: "stack", "aria-label": "Edit the ticket" },
    field("Subject", h("input", { name: "subject", value: ticket.subject, required: true })),
    field("Description", h("textarea", { name: "description", value: ticket.description })),
    h(
      "div",
      { className: "row" },
      field("Status", select("status", STATUSES, ticket.status)),
      field("Priority", select("priority", PRIORITIES, ticket.priority)),
      field("Tags (comma-separated)", h("input", { name: "tags", value: shownTags })),
    ),
    save,
    message,
  );
  element.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(element);
    const edited = {
      subject: data.get("subject"),
      // A textarea shows CR LF and CR as LF: the stored text, unless it was edited (not a rewrite of its line ends).
      description: data.get("description") === ticket.description.replace(/\r\n?/g, "\n") ? ticket.description : data.get("description"),
      status: data.get("status"),
      priority: data.get("priority"),
      // Read back from the text only when it was edited: a tag may hold a comma ("billing, eu", which
      // the API takes), and splitting the text as shown would cut it in two on a save of another field.
      tags: data.get("tags") === shownTags ? ticket.tags : String(data.get("tags")).split(",").map((t) => t.trim()).filter(Boolean),
    };
    const changes = Object.fromEntries(Object.entries(edited).filter(([name, value]) => JSON.stringify(value) !== JSON.stringify(ticket[name])));
    message.replaceChildren();
    if (!Object.keys(changes).length) {
      showAlert(message, "Nothing to save: no field changed.");
      return;
    }
    save.disabled = true;
    try {
      refresh("Ticket saved.", { ticket: await api.updateTicket(ticket.org_id, ticket.ticket_id, changes, ticket.version) });
    } catch (error) {
      if (error.status === 412) {
        const reload = h("button", { type: "button", className: "secondary", onClick: () => refresh() }, "Reload the ticket");
        message.replaceChildren(alert("This ticket was changed by someone else since you opened it. Reload to see their changes; yours are not saved."), reload);
        reload.focus();
      } else {
        showAlert(message, error.message);
      }
    } finally {
      save.disabled = false;
    }
  });
  return h("section", { "aria-labelledby": "ticket-edit" }, h("h2", { id: "ticket-edit" }, "Details"), element);
}

function remover(ticket, owner) {
  const message = h("div", { "aria-live": "polite" });
  const confirmDelete = h("button", { type: "button", className: "danger" }, "Delete for good");
  const cancel = h("button", { type: "button", className: "secondary" }, "Cancel");
  const dialog = h(
    "dialog",
    { "aria-labelledby": "ticket-delete-title" },
    h("h2", { id: "ticket-delete-title" }, "Delete this ticket?"),
    h("p", {}, `"${ticket.subject}" will be gone for everyone. This cannot be undone.`),
    h("div", { className: "row" }, confirmDelete, cancel),
    message,
  );
  cancel.addEventListener("click", () => dialog.close());
  // Cancel takes the focus, as in dom.confirm: the safe answer is the one Enter gives. A modal
  // focuses its first button, "Delete for good", so Enter twice from "Delete ticket…" deleted it.
  const open = () => {
    dialog.showModal();
    cancel.focus();
  };
  confirmDelete.addEventListener("click", async () => {
    confirmDelete.disabled = true;
    try {
      await api.deleteTicket(ticket.org_id, ticket.ticket_id, ticket.version);
      dialog.close();
      go(owner, "Ticket deleted.", { deletedTicket: ticket.ticket_id });
    } catch (error) {
      if (error.status === 412) {
        // What the dialog asked about is not the ticket any more: reload it, and decide again.
        const again = () => {
          dialog.close();
          refresh();
        };
        const reload = h("button", { type: "button", className: "secondary", onClick: again }, "Reload the ticket");
        message.replaceChildren(
          alert("This ticket was changed by someone else since you opened it, and is not deleted. Reload it, and decide again."),
          reload,
        );
        reload.focus();
      } else {
        message.replaceChildren(alert(error.message));
      }
    } finally {
      confirmDelete.disabled = false;
    }
  });
  return h(
    "section",
    { "aria-labelledby": "ticket-danger" },
    h("h2", { id: "ticket-danger" }, "Delete"),
    h("button", { type: "button", className: "danger", onClick: open }, "Delete ticket…"),
    dialog,
  );
}
