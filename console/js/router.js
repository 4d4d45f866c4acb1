// Moving between screens: go(hash, flash) and refresh(flash), with a message for the next screen's
// top ("Added bob."). The screens import these; app.js, which imports the screens, hands over its
// renderer with onRender, so that no screen imports app.js: no circle (tests/unit/test_console_modules.py).

let render = () => {};
let pendingFlash = null;
// What a write answered, for the screen it shows next (hash and value). On AWS a GET right after a
// write may read the old item (reads are eventually consistent, docs/API.md): a rename read back as
// it was, its old version sent as the next If-Match (a 412 for nothing), a ticket just opened a 404.
// The write's own answer is the new state, so the next screen starts from it instead.
let handed = null;

export function onRender(renderer) {
  render = renderer;
}

// Re-render the current screen, optionally with a message at its top and what the write answered.
export function refresh(flash, answer) {
  pendingFlash = flash || null;
  handed = answer ? { hash: location.hash, answer } : null;
  render();
}

export function go(hash, flash, answer) {
  pendingFlash = flash || null;
  handed = answer ? { hash, answer } : null;
  if (location.hash === hash) render();
  else location.hash = hash;
}

// The message for the screen being rendered, once.
export function takeFlash() {
  const flash = pendingFlash;
  pendingFlash = null;
  return flash;
}

// What the write before this screen answered ({ org }, { ticket }, ...), once, and only on the
// screen it was handed to; otherwise an empty object.
export function takeAnswer() {
  const answer = handed && handed.hash === location.hash ? handed.answer : {};
  handed = null;
  return answer;
}
