// Small DOM helpers: elements from tag, properties and children; labelled fields; messages.

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

export function loading(what) {
  return h("p", { role: "status" }, `Loading ${what}…`);
}

export function flashBox(message) {
  return message ? h("p", { role: "status", className: "flash" }, message) : null;
}

// A form whose submit runs `action(form data)`; its button is disabled while the call runs and any
// error is shown in the form as the API words it.
export function form(props, children, submitLabel, action) {
  const message = h("div", { "aria-live": "polite" });
  const button = h("button", { type: "submit" }, submitLabel);
  const element = h("form", props, ...children, button, message);
  element.addEventListener("submit", async (event) => {
    event.preventDefault();
    message.replaceChildren();
    button.disabled = true;
    try {
      await action(new FormData(element), element);
    } catch (error) {
      message.replaceChildren(alert(error.message));
    } finally {
      button.disabled = false;
    }
  });
  return element;
}

// A list that loads page after page: `fetchPage(cursor)` gives {items, next_cursor}; `row(item)`
// gives one element. "Load more" appears while there is a next page.
export function pagedList({ container, fetchPage, row, empty, label }) {
  const more = h("button", { type: "button", className: "secondary" }, "Load more");
  const message = h("div", { "aria-live": "polite" });
  let cursor = null;
  async function next() {
    more.disabled = true;
    message.replaceChildren(loading(label));
    try {
      const page = await fetchPage(cursor);
      message.replaceChildren();
      container.append(...page.items.map(row));
      cursor = page.next_cursor;
      if (!container.children.length) message.replaceChildren(h("p", { className: "muted" }, empty));
      more.hidden = !cursor;
    } catch (error) {
      message.replaceChildren(alert(error.message));
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
