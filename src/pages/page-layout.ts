import escapeHtml from 'escape-html';

/** HTML text with every interpolated value escaped: `html\`<p>${name}</p>\``. Pre-built fragments pass as they are. */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let text = strings[0];
  values.forEach((value, index) => {
    const items = Array.isArray(value) ? value : [value];
    text += items.map((item) => (item instanceof SafeHtml ? item.text : escapeHtml(String(item ?? '')))).join('');
    text += strings[index + 1];
  });
  return new SafeHtml(text);
}

/** The frame of the few server-rendered pages: no scripts, one small style sheet. */
export function page(title: string, body: SafeHtml): string {
  return html`<!DOCTYPE html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>${title}</title>
        <style>
          body {
            font-family: system-ui, sans-serif;
            max-width: 36rem;
            margin: 3rem auto;
            padding: 0 1rem;
            line-height: 1.5;
            color: #1f2328;
          }
          label {
            display: block;
            margin-top: 0.8rem;
          }
          input {
            display: block;
            width: 100%;
            padding: 0.4rem;
            box-sizing: border-box;
          }
          button {
            margin-top: 1.2rem;
            padding: 0.5rem 1rem;
          }
          .error {
            color: #b42318;
            border: 1px solid #b42318;
            padding: 0.5rem;
          }
          .done {
            color: #05603a;
            border: 1px solid #05603a;
            padding: 0.5rem;
          }
        </style>
      </head>
      <body>
        ${body}
      </body>
    </html> `.text;
}

/** The Content-Security-Policy of these pages: nothing but their own inline style and form. */
export const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
