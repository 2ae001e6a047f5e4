// ANSI colours in task output (doc/board.md, "Output"): SGR colours (the
// 16 named ones, the 256 of xterm, 24-bit) and bold become spans; every
// other escape sequence is dropped. The text goes in as text nodes and
// textContent, never as markup.
"use strict";

// An SGR sequence (its parameters in group 1), any other CSI or OSC
// sequence, or a lone two-byte escape.
const ANSI_SEQUENCE = /\x1b\[([0-9;:]*)m|\x1b\[[0-?]*[ -\/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?/g;

// Colour n of xterm's 256 above the 16 named ones: a 6x6x6 cube, then grey.
function xtermColour(n) {
  if (n >= 232) {
    const grey = 8 + (n - 232) * 10;
    return `rgb(${grey},${grey},${grey})`;
  }
  const steps = [0, 95, 135, 175, 215, 255];
  const i = n - 16;
  return `rgb(${steps[Math.floor(i / 36)]},${steps[Math.floor(i / 6) % 6]},${steps[i % 6]})`;
}

// The colour that SGR 38/48 gives from codes[i] on: [colour, codes used].
// A colour is 0-15 (a class) or a CSS rgb() string.
function extendedColour(codes, i) {
  if (codes[i] === 5 && codes[i + 1] >= 0 && codes[i + 1] <= 255) {
    const n = codes[i + 1];
    return [n < 16 ? n : xtermColour(n), 2];
  }
  if (codes[i] === 2 && codes.slice(i + 1, i + 4).length === 3) {
    const [r, g, b] = codes.slice(i + 1, i + 4).map((c) => Math.min(255, c || 0));
    return [`rgb(${r},${g},${b})`, 4];
  }
  return [null, 0];
}

// The style after the SGR parameters `params` ("1;31", "" = reset).
function applySgr(style, params) {
  const codes = params === "" ? [0] : params.split(/[;:]/).map(Number);
  let next = { ...style };
  for (let i = 0; i < codes.length; i += 1) {
    const code = codes[i];
    if (code === 0) next = { fg: null, bg: null, bold: false };
    else if (code === 1) next.bold = true;
    else if (code === 22) next.bold = false;
    else if (code >= 30 && code <= 37) next.fg = code - 30;
    else if (code >= 90 && code <= 97) next.fg = code - 90 + 8;
    else if (code >= 40 && code <= 47) next.bg = code - 40;
    else if (code >= 100 && code <= 107) next.bg = code - 100 + 8;
    else if (code === 39) next.fg = null;
    else if (code === 49) next.bg = null;
    else if (code === 38 || code === 48) {
      const [colour, used] = extendedColour(codes, i + 1);
      next[code === 38 ? "fg" : "bg"] = colour;
      i += used;
    }
  }
  return next;
}

function styled(text, style) {
  if (style.fg === null && style.bg === null && !style.bold) return document.createTextNode(text);
  const span = document.createElement("span");
  span.textContent = text;
  if (style.bold) span.classList.add("ansi-bold");
  for (const [which, colour] of [["fg", style.fg], ["bg", style.bg]]) {
    if (typeof colour === "number") span.classList.add(`ansi-${which}-${colour}`);
    // Through the CSSOM, which the page's Content-Security-Policy allows
    // (a style attribute it would refuse).
    else if (colour) span.style[which === "fg" ? "color" : "backgroundColor"] = colour;
  }
  return span;
}

// `text` as nodes: text nodes and spans, the escape sequences gone.
function ansiNodes(text) {
  const fragment = document.createDocumentFragment();
  let style = { fg: null, bg: null, bold: false };
  let last = 0;
  for (const match of text.matchAll(ANSI_SEQUENCE)) {
    if (match.index > last) fragment.append(styled(text.slice(last, match.index), style));
    last = match.index + match[0].length;
    if (match[1] !== undefined) style = applySgr(style, match[1]);
  }
  if (last < text.length) fragment.append(styled(text.slice(last), style));
  return fragment;
}
