"""Accessibility smoke checks: what a page's HTML must have (labels, headings, names), and a contrast check
that the browser test runs on the rendered page (computed colours, so the stylesheet is what is tested)."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

CONTROLS = {"input", "select", "textarea"}
UNLABELLED_TYPES = {"hidden", "submit", "button", "reset", "image"}


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lang = ""
        self.headings: list[int] = []
        self.controls: list[dict[str, str]] = []
        self.label_for: set[str] = set()
        self.label_depth = 0
        self.wrapped: list[dict[str, str]] = []
        self.svgs: list[dict[str, str]] = []
        self.buttons: list[list[str]] = []
        self.links: list[list[str]] = []
        self.open_text: list[list[str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "html":
            self.lang = a.get("lang", "")
        if len(tag) == 2 and tag[0] == "h" and tag[1].isdigit():
            self.headings.append(int(tag[1]))
        if tag == "label":
            self.label_depth += 1
            if a.get("for"):
                self.label_for.add(a["for"])
        if tag in CONTROLS and a.get("type", "") not in UNLABELLED_TYPES:
            self.controls.append(a)
            if self.label_depth:
                self.wrapped.append(a)
        if tag == "svg":
            self.svgs.append(a)
        if tag in ("button", "a"):
            text: list[str] = [a.get("aria-label", "")]
            (self.buttons if tag == "button" else self.links).append(text)
            self.open_text.append(text)

    def handle_endtag(self, tag: str) -> None:
        if tag == "label":
            self.label_depth -= 1
        if tag in ("button", "a") and self.open_text:
            self.open_text.pop()

    def handle_data(self, data: str) -> None:
        for text in self.open_text:
            text.append(data)


def problems(html: str) -> list[str]:
    """What a screen-reader user would miss on this page; empty when the smoke check passes."""
    page = _Page()
    page.feed(html)
    found = []
    if not page.lang:
        found.append("<html> has no lang")
    if page.headings.count(1) != 1:
        found.append(f"expected one <h1>, found {page.headings.count(1)}")
    for before, after in zip(page.headings, page.headings[1:], strict=False):
        if after > before + 1:
            found.append(f"heading level jumps from h{before} to h{after}")
    for control in page.controls:
        named = control.get("aria-label") or control.get("aria-labelledby")
        if not named and control.get("id") not in page.label_for and control not in page.wrapped:
            found.append(f"form control without a label: {control}")
    for svg in page.svgs:
        if svg.get("aria-hidden") != "true" and not (svg.get("role") == "img" and svg.get("aria-label")):
            found.append(f"<svg> without role=img and aria-label: {svg}")
    for kind, items in (("button", page.buttons), ("link", page.links)):
        for text in items:
            if not "".join(text).strip():
                found.append(f"{kind} without text")
    return found


def _channel(value: float) -> float:
    value /= 255
    return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4


def luminance(hex_colour: str) -> float:
    h = hex_colour.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return 0.2126 * _channel(r) + 0.7152 * _channel(g) + 0.0722 * _channel(b)


def contrast(fg: str, bg: str) -> float:
    a, b = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (a + 0.05) / (b + 0.05)


# Runs in the page: every visible element with its own text, its computed colour against the first opaque
# background behind it. Returns the elements below WCAG AA (4.5:1; 3:1 for large text).
CONTRAST_JS = """
() => {
  const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const c = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * c(r) + 0.7152 * c(g) + 0.0722 * c(b);
  };
  const background = el => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length >= 3 && (c.length < 4 || c[3] > 0.5)) return c;
    }
    return [255, 255, 255];
  };
  const bad = [];
  for (const el of document.querySelectorAll('body *')) {
    if (el.closest('svg') || el.closest('[hidden]')) continue;
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    const rect = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (!rect.width || !rect.height || style.visibility === 'hidden' || style.display === 'none') continue;
    if (rect.right < 0 || rect.bottom < 0) continue;  // off-screen (skip link)
    const fg = lum(rgb(style.color)), bg = lum(background(el));
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    const size = parseFloat(style.fontSize), bold = parseInt(style.fontWeight) >= 700;
    const needed = (size >= 24 || (bold && size >= 18.66)) ? 3 : 4.5;
    const what = `${el.tagName.toLowerCase()}.${el.className} "${el.textContent.trim().slice(0, 40)}"`;
    if (ratio < needed) bad.push(`${what} ${ratio.toFixed(2)}`);
  }
  return bad;
}
"""


def stylesheet_pairs(css: str) -> list[tuple[str, str, str]]:
    """(selector, colour, background) for each rule of the stylesheet that sets both as hex colours, with the
    :root custom properties resolved."""
    import re

    variables = dict(re.findall(r"(--[\w-]+):\s*(#[0-9a-fA-F]{3,6})", css))
    pairs = []
    for selector, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        decl: dict[str, Any] = {}
        for prop, value in re.findall(r"(?:^|;)\s*([\w-]+)\s*:\s*([^;]+)", body):
            value = value.strip()
            value = variables.get(value[4:-1], value) if value.startswith("var(") else value
            decl[prop] = value
        fg, bg = decl.get("color"), decl.get("background") or decl.get("background-color")
        if fg and bg and fg.startswith("#") and bg.startswith("#"):
            pairs.append((selector.strip(), fg, bg))
    return pairs
