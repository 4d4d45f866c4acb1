// Small DOM helpers: elements from tag, properties and children; labelled fields; messages.

import { retryable } from "./api.js";
import { refresh } from "./router.js";

export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2).toLowerCase(), value);
    else if (name in element && !name.includes("-")) element[name] = value;
    else element.setAttribute(name, value === true ? "" : value);
  }
  element.append(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
  return element;
}

// replaceChildren, leaving out the parts a caller may not be offered (null).
export function replace(parent, ...children) {
  parent.replaceChildren(...children.filter((child) => child !== null && child !== undefined && child !== false));
}

// A control with its visible label (the label wraps the control, so it is its accessible name).
export function field(label, control) {
  return h("label", {}, label, control);
}

export function select(name, options, value) {
  return h("select", { name }, ...options.map((option) => h("option", { value: option, selected: option === value }, option)));
}

export function alert(message) {
  return h("p", { role: "alert" }, message);
}

// An error shown in `box`, scrolled into view: the person who acted may be looking elsewhere.
export function showAlert(box, message) {
  const element = alert(message);
  box.replaceChildren(element);
  element.scrollIntoView({ block: "nearest" });
  return element;
}

// A table in a container of its own that scrolls sideways when the table is wider than the screen,
// so that the page itself never does (a 390 px phone).
export function scrolling(table) {
  return h("div", { className: "scroll" }, table);
}

// A modal question with a confirming and a cancelling button: resolves true on confirm, false on
// cancel or Escape. The dialog is removed once answered.
export function confirm({ title, text, confirmLabel, cancelLabel = "Cancel" }) {
  return new Promise((resolve) => {
    const yes = h("button", { type: "button", className: "danger" }, confirmLabel);
    const no = h("button", { type: "button", className: "secondary" }, cancelLabel);
    const heading = h("h2", {}, title);
    const dialog = h("dialog", {}, heading, ...[text].flat().map((line) => h("p", {}, line)), h("div", { className: "row" }, yes, no));
    heading.id = `dialog-${Date.now()}`;
    dialog.setAttribute("aria-labelledby", heading.id);
    let answer = false;
    yes.addEventListener("click", () => {
      answer = true;
      dialog.close();
    });
    no.addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(answer);
    });
    document.body.append(dialog);
    dialog.showModal();
    no.focus(); // the safe answer is the one Enter gives
  });
}

export function loading(what) {
  return h("p", { role: "status" }, `Loading ${what}…`);
}

export function flashBox(message) {
  return message ? h("p", { role: "status", className: "flash" }, message) : null;
}

// The write named a version (If-Match) that is no longer the stored one (412): what this page shows
// is stale. The API's words are for a client with ETags; a person needs to reload and decide again.
const CHANGED_SINCE =
  "Someone else changed this since the page loaded, so your change is not saved. Reload to see theirs, then try again.";

// A form whose submit runs `action(form data, form, key)`; its button is disabled while the call runs
// and any error is shown in the form as the API words it (a 412: with a button that reloads the screen).
// `key` is the Idempotency-Key a create sends: the same while the form is sent again with the same
// content (after an answer lost on the network, a 503...), so that the API replays its first answer
// instead of creating twice (a ticket opened twice); a refused create keeps no record, so sending its
// key again runs it again. Other content, or another form, another key.
export function form(props, children, submitLabel, action) {
  const message = h("div", { "aria-live": "polite" });
  const button = h("button", { type: "submit" }, submitLabel);
  const element = h("form", props, ...children, button, message);
  let attempt = null;
  element.addEventListener("submit", async (event) => {
    event.preventDefault();
    message.replaceChildren();
    button.disabled = true;
    const data = new FormData(element);
    const content = JSON.stringify([...data]);
    if (!attempt || attempt.content !== content) attempt = { content, key: crypto.randomUUID() };
    try {
      await action(data, element, attempt.key);
      attempt = null;
    } catch (error) {
      if (error.status === 412) {
        showAlert(message, CHANGED_SINCE);
        message.append(h("button", { type: "button", className: "secondary", onClick: () => refresh() }, "Reload"));
      } else {
        showAlert(message, error.message);
      }
    } finally {
      button.disabled = false;
    }
  });
  return element;
}

// A list that loads page after page: `fetchPage(cursor)` gives {items, next_cursor}; `row(item)`
// gives one element. "Load more" appears while there is a next page; "Try again" after a refusal
// that may pass later (429, 503, a move under way, the network). A cursor the API no longer continues
// (409 conflict: units moved, or a unit deleted and created again, since the listing began; 400
// invalid_cursor) makes the rows shown so far stale: they go, and the listing starts again. A later
// page that is 404 (the unit listed was deleted since) leaves nothing to show: the rows go too.
export function pagedList({ container, fetchPage, row, empty, label }) {
  const more = h("button", { type: "button", className: "secondary" }, "Load more");
  const message = h("div", { "aria-live": "polite" });
  let cursor = null;
  let rows = [];
  const forget = () => {
    rows.forEach((element) => element.remove());
    rows = [];
    cursor = null;
  };
  async function next() {
    more.disabled = true;
    message.replaceChildren(loading(label));
    let note = null;
    try {
      let page;
      try {
        page = await fetchPage(cursor);
      } catch (error) {
        if (!cursor || !((error.status === 409 && error.code === "conflict") || error.code === "invalid_cursor")) throw error;
        forget();
        note = `${error.message}. The list was started again.`;
        page = await fetchPage(null);
      }
      message.replaceChildren();
      const added = page.items.map(row);
      rows.push(...added);
      container.append(...added);
      cursor = page.next_cursor;
      if (note) message.replaceChildren(h("p", { role: "status" }, note));
      if (!container.children.length) message.append(h("p", { className: "muted" }, empty));
      more.textContent = "Load more";
      more.hidden = !cursor;
    } catch (error) {
      if (cursor && error.status === 404) forget();
      showAlert(message, error.message);
      more.textContent = cursor ? "Load more" : "Try again";
      more.hidden = !cursor && !retryable(error);
    } finally {
      more.disabled = false;
    }
  }
  more.addEventListener("click", next);
  more.hidden = true;
  next();
  return [message, more];
}

export function link(href, text) {
  return h("a", { href }, text);
}

// RFC 3339 UTC as "2026-11-21 23:41:48 UTC": the same for every reader of the page.
export function when(timestamp) {
  return h("time", { dateTime: timestamp }, `${timestamp.slice(0, 19).replace("T", " ")} UTC`);
}
