/**
 * The form's color as the checkout uses it for buttons and selected choices, which carry white text:
 * the same hue, darkened just enough for a contrast of at least 4.5:1 with white (WCAG AA).
 */

function luminance([r, g, b]: number[]): number {
  const lin = (v: number) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

export function contrastWithWhite(rgb: number[]): number {
  return 1.05 / (luminance(rgb) + 0.05);
}

export function readableAccent(hex: string): string {
  let rgb = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
  if (rgb.some(Number.isNaN)) rgb = [29, 78, 216];
  while (contrastWithWhite(rgb) < 4.6) rgb = rgb.map((v) => Math.floor(v * 0.92));
  return `#${rgb.map((v) => v.toString(16).padStart(2, "0")).join("")}`;
}
