/**
 * Debian's Chromium and the flags it runs headless with here: no sandbox (root in CI), no GPU,
 * no QUIC, and no background networking (this machine's closed network refuses those
 * connections). Never `--disable-web-security`: the tests exercise CORS for real.
 */
export const CHROMIUM = "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
