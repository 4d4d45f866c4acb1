// The console: sign-in, the header, and a hash router (#/orgs, #/orgs/acme, ...) over the screens.

import { signedOut, suspended } from "./api.js";
import * as auth from "./auth.js";
import { alert, field, flashBox, form, h, link, replace } from "./dom.js";
import { orgScreen } from "./org.js";
import { orgsScreen } from "./orgs.js";
import { go, onRender, takeFlash } from "./router.js";
import { ticketScreen } from "./ticket.js";
import { userScreen } from "./user.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");

const ROUTES = [
  [/^#\/orgs$/, () => orgsScreen],
  [/^#\/orgs\/([^/]+)$/, () => orgScreen],
  [/^#\/orgs\/([^/]+)\/users\/([^/]+)$/, () => userScreen],
  [/^#\/orgs\/([^/]+)\/tickets\/([^/]+)$/, () => ticketScreen],
];

// Where each caller starts: operators at the organizations, admins at their org, members at themselves.
function home(who) {
  if (who.operator) return "#/orgs";
  if (who.role === "admin") return `#/orgs/${encodeURIComponent(who.orgId)}`;
  return `#/orgs/${encodeURIComponent(who.orgId)}/users/${encodeURIComponent(who.userId)}`;
}

function showSignIn(message) {
  nav.replaceChildren();
  document.title = "Sign in · Control plane console";
  const token = h("textarea", { name: "token", rows: 4, required: true, autocomplete: "off", spellcheck: false });
  const paste = form(
    { className: "stack", "aria-label": "Sign in with a token" },
    [field("ID token", token)],
    "Sign in with this token",
    async (data) => {
      try {
        auth.signIn(String(data.get("token")));
      } catch {
        throw new Error("That is not an ID token (a JWT: three parts separated by dots).");
      }
      if (auth.isExpired(auth.caller())) {
        auth.forget();
        throw new Error("That token has expired. Get a new one.");
      }
      go("#/");
    },
  );
  const heading = h("h1", { tabIndex: -1 }, "Sign in");
  replace(
    main,
    heading,
    message ? alert(message) : null,
    auth.usesCognito()
      ? h("section", {}, h("button", { type: "button", onClick: () => auth.startCognitoSignIn() }, "Sign in with your account"))
      : null,
    auth.takesLocalTokens()
      ? h(
          "section",
          {},
          h("h2", {}, "Paste a token"),
          h("p", { className: "muted" }, "Locally, `make console` prints sign-in links; `make token` prints a token."),
          paste,
        )
      : null,
  );
  heading.focus();
}

function showNav(who) {
  const links = [];
  if (who.operator) links.push(link("#/orgs", "Organizations"));
  else {
    links.push(link(`#/orgs/${encodeURIComponent(who.orgId)}`, "Organization"));
    links.push(link(`#/orgs/${encodeURIComponent(who.orgId)}/users/${encodeURIComponent(who.userId)}`, "My profile"));
  }
  const role = who.operator ? "operator" : `${who.role} of ${who.orgId}`;
  nav.replaceChildren(
    ...links,
    h("span", { className: "who" }, `${who.name} (${role})`),
    h("button", { type: "button", className: "secondary", onClick: signOut }, "Sign out"),
  );
}

function signOut() {
  if (!auth.signOut()) showSignIn("You are signed out.");
}

async function render() {
  const who = auth.caller();
  if (!who) return showSignIn();
  if (auth.isExpired(who)) {
    auth.forget();
    return showSignIn("Your session has expired. Sign in again.");
  }
  showNav(who);
  const hash = location.hash || "#/";
  const route = ROUTES.find(([pattern]) => pattern.test(hash));
  if (!route) {
    location.replace(home(who));
    return;
  }
  let params;
  try {
    params = hash.match(route[0]).slice(1).map(decodeURIComponent);
  } catch {
    // A link with a broken %-escape ("%E0%A4%A") names nothing: home, not a script error and a stale screen.
    location.replace(home(who));
    return;
  }
  const flash = takeFlash();
  const screen = h("div", {});
  replace(main, flashBox(flash), screen);
  await route[1]()(screen, who, ...params);
  const heading = main.querySelector("h1");
  if (heading) {
    heading.tabIndex = -1;
    heading.focus();
    document.title = `${heading.textContent} · Control plane console`;
  }
}

// The session is over. Every panel of a screen calls the API with the same token, so several refusals
// arrive: the first forgets the token and shows the sign-in page; the others, and a refusal of an
// earlier token answered after someone signed in again, find another token (or none) and change nothing.
signedOut.addEventListener("ended", (event) => {
  const { token, error } = event.detail;
  const who = auth.caller();
  if (!who || who.token !== token) return;
  auth.forget();
  showSignIn(
    error.code === "session_ended"
      ? `Your session has ended. ${error.message}: your user or your organization has been deleted.`
      : "Your session has expired or is no longer valid. Sign in again.",
  );
});

// The gateway refuses a suspended org's admins and members (403 org_suspended): one clear page with
// the API's words ("Organization acme is suspended"), not a screen of failed parts. A refusal of an
// earlier token answered after someone else signed in (or after signing out) changes nothing.
suspended.addEventListener("suspended", (event) => {
  const { token, error } = event.detail;
  const who = auth.caller();
  if (!who || who.token !== token) return;
  const heading = h("h1", { tabIndex: -1 }, error.message);
  replace(
    main,
    heading,
    h("p", {}, "An operator has suspended your organization: its users cannot use the console or the API until it is reactivated."),
    h("p", {}, "Ask your operator to reactivate it, then try again."),
    h("button", { type: "button", onClick: () => render() }, "Try again"),
  );
  document.title = `${error.message} · Control plane console`;
  heading.focus();
});

// A token or a code in the address, when the page loads or its #fragment changes (a sign-in link
// opened in this tab): taken first, then the screen.
async function arrive() {
  const failure = await auth.takeTokenFromAddress();
  if (failure) return showSignIn(failure);
  render();
}

// "Skip to content" (index.html) moves the focus to the content. Followed as a link, its #main is
// a hash change, which the router answers with the caller's home screen: a keyboard user skipping
// the header of a ticket was sent to their home instead.
document.querySelector("a.skip").addEventListener("click", (event) => {
  event.preventDefault();
  main.focus();
});

async function start() {
  try {
    await auth.loadSettings();
  } catch (error) {
    main.replaceChildren(alert(error.message));
    return;
  }
  onRender(render);
  window.addEventListener("hashchange", arrive);
  arrive();
}

start();
