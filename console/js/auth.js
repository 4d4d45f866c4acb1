// Who is signed in: the settings written at deploy time (config.json), the ID token kept in
// sessionStorage, and the two ways to get one: Cognito's managed login (authorization code + PKCE)
// in the cloud, or a local token in the address bar (#id_token=...) or pasted into the sign-in form.
// Only the local build takes a token handed over (its config.json, local/console.py, says
// localSignIn: true; the stack's, infra/console.py, has no such key): in the cloud a crafted link
// would sign a victim in to the attacker's account (sign-in CSRF), so there only the code grant,
// started in this browser with its own state and PKCE verifier, signs in.

const TOKEN = "console.id_token";
const VERIFIER = "console.pkce_verifier";
const STATE = "console.pkce_state";
const OPERATORS_GROUP = "operators";

let settings = null;

export async function loadSettings() {
  const unread = "The console's settings (config.json) could not be read";
  let answer;
  try {
    answer = await fetch("./config.json", { cache: "no-store" });
  } catch {
    throw new Error(`${unread}: the network did not answer. Reload the page.`); // not the browser's "Failed to fetch"
  }
  if (!answer.ok) throw new Error(`${unread}: ${answer.status}`);
  settings = await answer.json();
  return settings;
}

export function apiUrl() {
  return (settings && settings.apiUrl) || "";
}

export function usesCognito() {
  return Boolean(settings && settings.cognitoDomain && settings.clientId);
}

// Fail closed: anything but an explicit true (a missing key, a stack's config) is the cloud build.
export function takesLocalTokens() {
  return Boolean(settings && settings.localSignIn === true);
}

function claimsOf(token) {
  const part = token.split(".")[1];
  if (!part) throw new Error("not a JWT");
  const json = atob(part.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(part.length / 4) * 4, "="));
  return JSON.parse(json);
}

// The caller as the API will see them. The API decides; this only chooses what to offer.
export function caller() {
  const token = sessionStorage.getItem(TOKEN);
  if (!token) return null;
  let claims;
  try {
    claims = claimsOf(token);
  } catch {
    return null;
  }
  const groups = claims["cognito:groups"] || [];
  return {
    token,
    sub: claims.sub || null,
    expiresAt: Number(claims.exp || 0) * 1000,
    operator: (Array.isArray(groups) ? groups : String(groups).split(/[ ,]/)).includes(OPERATORS_GROUP),
    orgId: claims["custom:org_id"] || null,
    userId: claims["custom:user_id"] || null,
    role: claims["custom:role"] || null,
    name: claims["cognito:username"] || claims.email || claims.sub,
  };
}

export function isExpired(who) {
  return !who || who.expiresAt <= Date.now();
}

// A token pasted into the form (local build only) or redeemed from Cognito's code. A JWT holds no
// whitespace: the line breaks of a terminal that wrapped it, copied with it, are not part of it.
export function signIn(token) {
  const trimmed = token.trim().replace(/^Bearer\s+/i, "").replace(/\s+/g, "");
  claimsOf(trimmed); // throws on something that is not a token
  sessionStorage.setItem(TOKEN, trimmed);
}

export function forget() {
  sessionStorage.removeItem(TOKEN);
}

// A token handed over in the address bar (#id_token=...), or Cognito's ?code= coming back: taken into
// sessionStorage, in place of whoever was signed in, and removed from the address bar and the history.
// Called when the page loads and on every change of its #fragment, so that a sign-in link opened in a
// tab already signed in signs in as the link says. Returns a message on failure.
export async function takeTokenFromAddress() {
  const hash = new URLSearchParams(location.hash.slice(1));
  const search = new URLSearchParams(location.search);
  let failure = null;
  if (hash.has("id_token") && !takesLocalTokens()) {
    failure = "This console signs in through your account only: sign-in links with a token are for the local console.";
  } else if (hash.has("id_token")) {
    try {
      signIn(hash.get("id_token"));
    } catch {
      failure = "The link's token is not a valid ID token.";
    }
  } else if (search.has("code") || search.has("error")) {
    failure = await redeemCode(search);
  } else {
    return null;
  }
  history.replaceState(null, "", location.pathname + "#/");
  return failure;
}

function randomString(bytes) {
  const data = crypto.getRandomValues(new Uint8Array(bytes));
  return base64url(data);
}

function base64url(bytes) {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

// Where Cognito sends the browser back: the console's folder, the same from / and /index.html (the
// stack registers the root as the one callback and sign-out URL; any other is redirect_mismatch).
export function redirectUri() {
  return new URL(".", location.href).href;
}

export async function startCognitoSignIn() {
  const verifier = randomString(32);
  const state = randomString(16);
  sessionStorage.setItem(VERIFIER, verifier);
  sessionStorage.setItem(STATE, state);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  const query = new URLSearchParams({
    response_type: "code",
    client_id: settings.clientId,
    redirect_uri: redirectUri(),
    scope: "openid email profile",
    state,
    code_challenge: base64url(new Uint8Array(digest)),
    code_challenge_method: "S256",
  });
  location.assign(`${settings.cognitoDomain}/oauth2/authorize?${query}`);
}

async function redeemCode(search) {
  const verifier = sessionStorage.getItem(VERIFIER);
  const state = sessionStorage.getItem(STATE);
  sessionStorage.removeItem(VERIFIER);
  sessionStorage.removeItem(STATE);
  if (search.has("error")) return `Sign-in failed: ${search.get("error_description") || search.get("error")}`;
  if (!verifier || search.get("state") !== state) return "Sign-in failed: the answer does not match this browser's request.";
  // A network failure is said on the sign-in page, as a refusal is: thrown, it left "Loading…" for
  // good, and the spent code in the address.
  let answer;
  try {
    answer = await fetch(`${settings.cognitoDomain}/oauth2/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        client_id: settings.clientId,
        code: search.get("code"),
        redirect_uri: redirectUri(),
        code_verifier: verifier,
      }),
    });
  } catch {
    return "Sign-in failed: the sign-in service cannot be reached. Check your connection and sign in again.";
  }
  if (!answer.ok) return `Sign-in failed (${answer.status}).`;
  try {
    signIn((await answer.json()).id_token);
  } catch {
    return "Sign-in failed: the sign-in service's answer holds no valid ID token. Sign in again.";
  }
  return null;
}

// Sign-out: the token goes; in the cloud Cognito's session ends too.
export function signOut() {
  forget();
  if (usesCognito()) {
    const query = new URLSearchParams({ client_id: settings.clientId, logout_uri: redirectUri() });
    location.assign(`${settings.cognitoDomain}/logout?${query}`);
    return true;
  }
  return false;
}
