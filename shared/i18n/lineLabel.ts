/**
 * The lines pricing labels itself (a gift by its frequency, "Monthly donation"; an event's "Additional
 * donation") are kept on payments in English; each has a message `checkout.line.<that label>`, so a reader
 * sees it in their language. Tickets and products carry the organization's own names, shown as written, and
 * so does a giving level, whose label has no such message.
 */
export function lineLabel(
  line: { label: string; kind?: string },
  translate: (key: string) => string | undefined,
): string {
  if (line.kind === "ticket" || line.kind === "product") return line.label;
  return translate(`checkout.line.${line.label}`) ?? line.label;
}
