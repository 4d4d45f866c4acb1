// Moving between screens: go(hash, flash) and refresh(flash), with a message for the next screen's
// top ("Added bob."). The screens import these; app.js, which imports the screens, hands over its
// renderer with onRender, so that no screen imports app.js: no circle (tests/unit/test_console_modules.py).

let render = () => {};
let pendingFlash = null;

export function onRender(renderer) {
  render = renderer;
}

// Re-render the current screen, optionally with a message at its top.
export function refresh(flash) {
  pendingFlash = flash || null;
  render();
}

export function go(hash, flash) {
  pendingFlash = flash || null;
  if (location.hash === hash) render();
  else location.hash = hash;
}

// The message for the screen being rendered, once.
export function takeFlash() {
  const flash = pendingFlash;
  pendingFlash = null;
  return flash;
}
